package app

import (
	"context"
	"fmt"
	"time"
)

// lostWritesQueue bounds the runs found rolled back that wait to be offered
// again; a run that does not fit is logged, and offered again when someone
// clicks one of its lost checkpoint's buttons.
const lostWritesQueue = 256

// lostRun is a run whose stored version was found lower than one seen.
type lostRun struct {
	id          string
	stored, saw int64
}

// noteLostWrites is the Store's OnLostWrites: it hands the run to
// offerLostAgain without blocking the read that found the loss.
func (a *App) noteLostWrites(id string, stored, seen int64) {
	if !a.lostWatched.Load() {
		return // no worker here: the workers' sweeps and the clicks find it
	}
	select {
	case a.lost <- lostRun{id: id, stored: stored, saw: seen}:
	default:
		a.log.Error("too many runs found rolled back at once; this one's checkpoint is not offered again until someone acts on it",
			"run", id, "stored_version", stored, "version_seen_before", seen)
	}
}

// watchLostWrites offers again the checkpoints of runs whose stored state
// went back in time (Redis restored from an older append-only file, or a
// failover to a replica that was behind), until ctx ends. Every interval it
// reads the versions of the runs this process has seen, so a rollback of
// runs that wait for people (which nobody reads) is found within an
// interval of Redis answering again.
func (a *App) watchLostWrites(ctx context.Context, interval time.Duration) {
	a.lostWatched.Store(true)
	defer a.lostWatched.Store(false)
	if interval <= 0 {
		interval = 5 * time.Second
	}
	t := a.opts.Clock.NewTicker(interval, "app", "lost-writes")
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case l := <-a.lost:
			a.offerLostAgain(ctx, l)
		case <-t.C:
			if err := a.Store.CheckLostWrites(ctx); err != nil && ctx.Err() == nil {
				a.log.Debug("checking runs for lost writes failed", "err", err)
			}
		}
	}
}

// offerLostAgain asks the engine to offer a rolled-back run's checkpoint again.
func (a *App) offerLostAgain(ctx context.Context, l lostRun) {
	evidence := fmt.Sprintf("stored version %d, version %d seen before", l.stored, l.saw)
	if _, err := a.Engine.OfferLostAgain(ctx, l.id, evidence); err != nil && ctx.Err() == nil {
		a.log.Error("could not offer a checkpoint again after Redis lost writes; it is offered when someone clicks one of the run's buttons",
			"run", l.id, "err", err)
	}
}
