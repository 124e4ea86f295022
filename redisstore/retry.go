package redisstore

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// retry is a run this process tries again at its time.
type retry struct {
	p     pending
	timer *quartz.Timer
}

// claimUntilRetry claims the run in Redis until its retry (the claim key
// a pass sets, for delay), so no replica's pass takes it early; if this
// process dies, the claim lapses at the retry's time and a pass finds the
// run in the work index.
func (w *Worker) claimUntilRetry(runID string, delay time.Duration) {
	if delay < time.Millisecond {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.Lease/3)
	defer cancel()
	if err := w.rdb.Set(ctx, claimKey(w.opts.Prefix, runID), "retry", delay).Err(); err != nil {
		w.log.Debug("could not claim a run until its retry", "run", runID, "err", err)
	}
}

// retryLocked tries p's run again after delay, on this process's clock,
// counting the failure; w.mu is held (and the run is no longer in flight,
// so the retry is not taken for a wake-up of the advance that failed).
func (w *Worker) retryLocked(p pending, delay time.Duration) {
	if w.stopped {
		return
	}
	p.failures++
	r := &retry{p: p}
	r.timer = w.clock.AfterFunc(max(delay, 0), func() { w.retryDue(r) }, "redisstore", "retry")
	w.retrying[p.run] = r
}

// retryDue starts a retry whose time came (or queues it for the next free
// slot).
func (w *Worker) retryDue(r *retry) {
	w.mu.Lock()
	if w.retrying[r.p.run] != r || w.stopped {
		w.mu.Unlock()
		return
	}
	delete(w.retrying, r.p.run)
	w.mu.Unlock()
	w.take(r.p)
}

// retries counts the runs of queue this process waits to try again.
func (w *Worker) retries(queue string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.retrying {
		if r.p.queue == queue {
			n++
		}
	}
	return n
}
