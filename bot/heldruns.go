package bot

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// A request's run is stored held (pipeline.Request.Held) before its root
// message is posted, and released once it is (startResearch). A process
// killed in between (a SIGKILL while Slack handles the root's
// chat.postMessage) leaves the run held: a sweep in every serving process
// finishes starting it once its starter's claim has expired, looking before
// it posts the root again (postOnce), so the request is neither lost nor
// shown twice.
const (
	// heldClaimTTL is how long a process that starts a run keeps others
	// from finishing it for it; its starter needs a second or two.
	heldClaimTTL = 20 * time.Second
	// heldSweepEvery is how often held runs are looked for, and
	// heldSweepBatch how many at most each time.
	heldSweepEvery = 5 * time.Second
	heldSweepBatch = 20
)

// sweepHeld, run by App.Run until ctx ends, finishes starting the runs whose
// starter died before it released them.
func (a *App) sweepHeld(ctx context.Context) {
	t := a.clock.NewTicker(heldSweepEvery, "bot", "held")
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.sweepHeldOnce(ctx)
		}
	}
}

// sweepHeldOnce finishes starting the held runs whose claim expired.
func (a *App) sweepHeldOnce(ctx context.Context) {
	ids, err := a.cfg.Memory.HeldRuns(ctx, a.now().Add(-heldClaimTTL), heldSweepBatch)
	if err != nil {
		a.log.Warn("bot: listing the runs held while their request was shown failed", "err", err)
		return
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		claimed, err := a.cfg.Memory.ClaimHeldRun(ctx, id, heldClaimTTL)
		if err != nil || !claimed {
			continue
		}
		log := a.log.With("run_id", id)
		run, err := a.engine.Load(ctx, id)
		switch {
		case errors.Is(err, pipeline.ErrNotFound):
			a.forgetHeld(ctx, id) // its starter died (or failed) before storing it
			continue
		case err != nil:
			log.Warn("bot: loading a held run failed; it is tried again", "err", err)
			continue
		case !run.Held:
			a.forgetHeld(ctx, id)
			continue
		}
		log.Warn("bot: a run was stored but its request not shown (the process starting it stopped); finishing its start")
		thread, err := a.showHeld(ctx, run, log)
		switch {
		case err != nil && !errors.Is(err, errStartLater):
			log.Error("bot: finishing the start of a held run failed", "err", err)
		case thread != "":
			a.metrics.runStarted()
			log.Info("bot: run started by the sweep", "thread", thread)
		}
	}
}

// errStartLater says a held run's start is left to the sweep.
var errStartLater = errors.New("bot: the start of the run is finished later")

// showHeld posts (once) the root message of held run r, remembers its
// thread and releases the run; it returns the run's thread, "" when the run
// was not released here (released already, or to be tried again by the
// sweep). A root Slack refuses withdraws the run, and the error says why;
// a root whose post may have landed (a transient failure) leaves the run to
// the sweep (errStartLater).
func (a *App) showHeld(ctx context.Context, r *pipeline.Run, log *slog.Logger) (string, error) {
	root := blockkit.RootInfo{Question: r.Question, RunID: r.ID, RequestedBy: r.RequestedBy, Mode: r.Mode, Depth: r.Depth, Status: pipeline.StatusQueued}
	_, ts, err := a.once.post(ctx, postKey{Run: r.ID, Post: "root"}, r.Origin.Channel, r.Origin.ThreadTS, blockkit.RenderRoot(root), blockkit.RootText(root))
	if err != nil && transient(err) {
		// Slack may have posted it (its answer lost): the sweep finishes
		// the start, looking for the message before it posts it again.
		log.Warn("bot: posting the root message failed; the run stays held and its start is finished shortly", "run_id", r.ID, "err", err)
		return "", errStartLater
	}
	if err != nil {
		log.Error("bot: posting the root message failed", "run_id", r.ID, "err", err)
		if werr := a.engine.Withdraw(context.WithoutCancel(ctx), r.ID, "its root message could not be posted: "+SlackErrorCode(err)); werr != nil {
			log.Warn("bot: withdrawing a run whose root message could not be posted failed", "run_id", r.ID, "err", werr)
		}
		a.forgetHeld(ctx, r.ID)
		return "", err
	}
	thread := blockkit.FirstNonEmpty(r.Origin.ThreadTS, ts)
	a.rememberThread(ctx, r.Origin.Channel, thread, r.ID)
	released, err := a.engine.Release(ctx, r.ID, thread)
	if err != nil {
		log.Error("bot: releasing a run after posting its root message failed; the sweep tries again", "run_id", r.ID, "err", err)
		return "", nil
	}
	a.forgetHeld(ctx, r.ID)
	if released.Parent != "" {
		a.linkFollowUp(ctx, released, thread, released.RequestedBy)
	}
	return thread, nil
}

// forgetHeld drops a run from the held ones (best effort: a sweep that
// finds it released drops it too).
func (a *App) forgetHeld(ctx context.Context, runID string) {
	if err := a.cfg.Memory.ForgetHeldRun(context.WithoutCancel(ctx), runID); err != nil {
		a.log.Warn("bot: forgetting a held run failed", "run_id", runID, "err", err)
	}
}
