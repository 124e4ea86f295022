package redisstore

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Rescuer re-queues runs whose worker died. A run needs rescue when it has
// work to do (it is not waiting for a person, or it finished but its outcome
// was not shown yet), was last saved
// more than two leases ago, and nobody holds its lease. The queue's own
// recovery of a dead worker's task takes minutes; this takes about two
// leases. A rescue is at most once per window across all replicas, and a
// duplicate task is harmless (the lease serialises workers).
type Rescuer struct {
	Store  *Store
	Locker *Locker
	Queue  *Queue
	// Queues are the queues this process serves; runs on others are left alone.
	Queues []string
	Now    func() time.Time
	Logger *slog.Logger
}

// RescueOnce looks for runs to rescue and queues them; it returns how many.
func (r *Rescuer) RescueOnce(ctx context.Context) (int, error) {
	ttl := r.Locker.TTL()
	ids, err := r.Store.StaleRuns(ctx, r.Now().Add(-2*ttl), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if held, err := r.Locker.Held(ctx, id); err != nil || held {
			continue
		}
		run, err := r.Store.Load(ctx, id)
		if err != nil || !slices.Contains(r.Queues, run.Origin.Queue) || !needsWorker(run) {
			continue
		}
		if ok, err := r.Store.ClaimRescue(ctx, id, 10*ttl); err != nil || !ok {
			continue
		}
		if err := r.Queue.Enqueue(ctx, run.Origin.Queue, id); err != nil {
			return n, err
		}
		if r.Logger != nil {
			r.Logger.Warn("re-queued a run whose worker stopped", "run", id, "step", run.Step, "status", run.Status)
		}
		n++
	}
	return n, nil
}

// needsWorker reports whether a worker has something to do for the run:
// a step to run, a decision to apply, or a finished outcome to show.
func needsWorker(run *pipeline.Run) bool {
	if run.Status.Final() {
		return !run.Presented
	}
	inst := run.Current()
	if inst == nil {
		return run.Status == pipeline.StatusRunning || run.Status == pipeline.StatusQueued
	}
	switch inst.State {
	case checkpoints.StatePending, checkpoints.StateSubmitted, checkpoints.StateFailed:
		return true
	}
	return false
}

// Run rescues every lease until ctx ends.
func (r *Rescuer) Run(ctx context.Context) {
	t := time.NewTicker(r.Locker.TTL())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.RescueOnce(ctx); err != nil && ctx.Err() == nil && r.Logger != nil {
				r.Logger.Warn("rescue pass failed", "err", err)
			}
		}
	}
}
