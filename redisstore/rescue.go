package redisstore

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/coder/quartz"
)

// timerSlack is how long after a checkpoint's deadline a rescue pass treats
// its timer as lost: a timer task normally fires within 2 s.
const timerSlack = 5 * time.Second

// Interrupter marks an abandoned run interrupted (*pipeline.Engine).
type Interrupter interface {
	Interrupt(ctx context.Context, runID string) error
}

// Rescuer re-queues runs whose worker died, in the queues this process
// serves. Each queue has its own index of runs with work (the save script
// keeps it), so runs of other queues — terminal runs abandoned with Ctrl-C,
// say — never stand in the way.
//
// A run needs rescue when it has work (it is not waiting for a person, or
// it finished but its outcome was not shown yet, or a checkpoint shown
// before a crash was never confirmed), nobody holds its lease, and it was
// last saved more than half a lease ago (a fresh wake-up is normally taken
// within 200 ms). A pass runs every half lease, and a dead worker's lease
// expires at most one lease after its last refresh, so a run is taken over
// within 1.5 leases of its worker's death (≤ 2×RUN_LEASE with the time a
// worker takes to pick it up). Runs whose checkpoint timer went missing are
// found through the queue's deadline index. At most one replica rescues a
// run per window, and a duplicate task is harmless (the lease serialises
// workers).
type Rescuer struct {
	Store  *Store
	Locker *Locker
	Queue  *Queue
	// Queues are the queues this process serves; runs on others are left alone.
	Queues []string
	// Abandoned, when set, names queues of other processes whose runs no
	// one else would take (a terminal's private queue): a run of such a
	// queue that nobody advanced for 4 leases is marked interrupted by
	// Interrupter, so it is listed as such.
	Abandoned   func(queue string) bool
	Interrupter Interrupter
	// Clock dates the passes and times Run's interval (a ticker tagged
	// "redisstore", "rescue"); nil means the real clock.
	Clock quartz.Clock
	// NewQueues says Queues were made for this process just now (a
	// terminal run's private queue): Run's first pass does not look in
	// them, since nothing there can be half a lease old yet (its
	// look at abandoned queues is made as usual).
	NewQueues bool
	Logger    *slog.Logger
}

// RescueOnce looks for runs to rescue and queues them; it returns how many.
func (r *Rescuer) RescueOnce(ctx context.Context) (int, error) {
	return r.pass(ctx, r.Queues)
}

// pass is RescueOnce over queues (of r.Queues).
func (r *Rescuer) pass(ctx context.Context, queues []string) (int, error) {
	ttl := r.Locker.TTL()
	now := r.clock().Now()
	n := 0
	for _, q := range queues {
		ids, err := r.Store.WorkRuns(ctx, q, now.Add(-ttl/2), 100)
		if err != nil {
			return n, err
		}
		due, err := r.Store.DueTimers(ctx, q, now.Add(-timerSlack), 100)
		if err != nil {
			return n, err
		}
		for _, id := range due {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		rescued, err := r.rescue(ctx, q, ids, now)
		n += rescued
		if err != nil {
			return n, err
		}
	}
	if r.Abandoned != nil && r.Interrupter != nil {
		if err := r.interruptAbandoned(ctx, now); err != nil {
			return n, err
		}
	}
	return n, nil
}

// clock is the Rescuer's Clock, the real clock when nil.
func (r *Rescuer) clock() quartz.Clock {
	if r.Clock == nil {
		return quartz.NewReal()
	}
	return r.Clock
}

func (r *Rescuer) rescue(ctx context.Context, queue string, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	ttl := r.Locker.TTL()
	held, err := r.Locker.held(ctx, ids)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if held[id] {
			continue
		}
		run, err := r.Store.loadMeta(ctx, id)
		if err != nil {
			continue
		}
		if d := run.Deadline(); !run.NeedsWorker() && (d.IsZero() || now.Before(d)) {
			continue
		}
		if ok, err := r.Store.ClaimRescue(ctx, id, ttl); err != nil || !ok {
			continue
		}
		if err := r.Queue.Rescue(ctx, queue, id, run.Version, now.UnixMilli()/ttl.Milliseconds()); err != nil {
			return n, err
		}
		if r.Logger != nil {
			r.Logger.Info("re-queued a run whose worker stopped", "run", id, "step", run.Step, "status", run.Status)
		}
		n++
	}
	return n, nil
}

// interruptAbandoned marks runs of abandoned queues interrupted once nobody
// advanced them for 4 leases, and forgets queues that have no work left
// (forgetIfDone).
func (r *Rescuer) interruptAbandoned(ctx context.Context, now time.Time) error {
	queues, err := r.Store.rdb.SMembers(ctx, r.Store.prefix+"queues").Result()
	if err != nil {
		return err
	}
	ttl := r.Locker.TTL()
	for _, q := range queues {
		if slices.Contains(r.Queues, q) || !r.Abandoned(q) {
			continue
		}
		ids, err := r.Store.WorkRuns(ctx, q, now.Add(-4*ttl), 100)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			if err := r.forgetIfDone(ctx, q, now); err != nil && r.Logger != nil {
				r.Logger.Info("could not delete an abandoned queue", "queue", q, "err", err)
			}
			continue
		}
		for _, id := range ids {
			if err := r.Interrupter.Interrupt(ctx, id); err != nil && r.Logger != nil {
				r.Logger.Info("could not mark an abandoned run interrupted", "run", id, "err", err)
			}
		}
	}
	return nil
}

// forgetIfDone deletes an abandoned queue once none of its runs has work
// and none waits for a deadline that is recent (its process would still
// handle it if it were alive): its asynq keys (Queue.Purge: the tasks of
// killed, failed and interrupted runs), its deadline index and its name.
// A process still alive and waiting for a person loses nothing: it queues
// a wake-up afresh, and a run resumed later is indexed again when saved.
func (r *Rescuer) forgetIfDone(ctx context.Context, q string, now time.Time) error {
	work, err := r.Store.rdb.ZCard(ctx, r.Store.workKey(q)).Result()
	if err != nil || work > 0 {
		return err
	}
	since := strconv.FormatInt(now.Add(-4*r.Locker.TTL()).UnixMilli(), 10)
	waiting, err := r.Store.rdb.ZCount(ctx, r.Store.timersKey(q), since, "+inf").Result()
	if err != nil || waiting > 0 {
		return err
	}
	if err := r.Queue.Purge(ctx, q); err != nil {
		return err
	}
	if err := r.Store.rdb.Del(ctx, r.Store.timersKey(q)).Err(); err != nil {
		return err
	}
	return r.Store.rdb.SRem(ctx, r.Store.prefix+"queues", q).Err()
}

// OldestUnleased returns how long the oldest run with work in the served
// queues has gone without a worker: the time since its last save, for the
// oldest run nobody holds (0 when every such run is held).
func (r *Rescuer) OldestUnleased(ctx context.Context) (time.Duration, error) {
	now := r.clock().Now()
	var oldest time.Duration
	for _, q := range r.Queues {
		zs, err := r.Store.OldestWork(ctx, q, 50)
		if err != nil {
			return 0, err
		}
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i], _ = z.Member.(string)
		}
		held, err := r.Locker.held(ctx, ids)
		if err != nil {
			return 0, err
		}
		for i, z := range zs {
			if held[ids[i]] {
				continue
			}
			oldest = max(oldest, now.Sub(time.UnixMilli(int64(z.Score))))
			break
		}
	}
	return oldest, nil
}

// Run rescues runs every half lease until ctx ends.
func (r *Rescuer) Run(ctx context.Context) {
	t := r.clock().NewTicker(r.Locker.TTL()/2, "redisstore", "rescue")
	defer t.Stop()
	queues := r.Queues
	if r.NewQueues {
		queues = nil
	}
	for {
		_, err := r.pass(ctx, queues)
		queues = r.Queues
		if err != nil && ctx.Err() == nil && r.Logger != nil {
			r.Logger.Info("rescue pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
