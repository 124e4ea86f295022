package redisstore

import "sync"

// rateBatches gathers the Allow calls for one rate budget that arrive while
// a call for that budget is on its way to Redis, so they take their events
// together in one call (group commit): a step that searches five queries at
// once asks Redis twice, not five times, and each call was a script of four
// commands. Nobody waits for a batch to fill: the first call goes at once,
// and those that come meanwhile wait only for it to end.
type rateBatches struct {
	mu      sync.Mutex
	budgets map[string]*rateBudgetCalls
}

// rateBudgetCalls is one budget's calls: the one on its way to Redis (its
// batch's done, nil when none) and the batch gathering behind it.
type rateBudgetCalls struct {
	inflight chan struct{}
	open     *rateBatch
}

// rateBatch is the calls that take their events from Redis together.
type rateBatch struct {
	n    int           // events (callers) in the batch
	done chan struct{} // closed when the answer is in
	// The answer: allowed (every event taken), or not (each caller then
	// asks alone, so none is refused for the others' sake).
	allowed bool
	err     error
}

// join adds a caller to the budget's batches. The leader of a batch (lead)
// makes its call: after prev, the call before it, has ended (nil: at once).
// Others wait for their batch's done.
func (bs *rateBatches) join(budget string) (b *rateBatch, lead bool, prev chan struct{}) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.budgets == nil {
		bs.budgets = map[string]*rateBudgetCalls{}
	}
	c := bs.budgets[budget]
	if c == nil {
		c = &rateBudgetCalls{}
		bs.budgets[budget] = c
	}
	if c.open != nil {
		c.open.n++
		return c.open, false, nil
	}
	b = &rateBatch{n: 1, done: make(chan struct{})}
	if c.inflight == nil {
		c.inflight = b.done
		return b, true, nil
	}
	c.open = b
	return b, true, c.inflight
}

// start closes the leader's batch to newcomers (once the call before it has
// ended) and returns how many events it takes.
func (bs *rateBatches) start(budget string, b *rateBatch) int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	c := bs.budgets[budget]
	if c.open == b {
		c.open = nil
	}
	c.inflight = b.done
	return b.n
}

// finish records that the leader's call has ended and wakes its batch.
func (bs *rateBatches) finish(budget string, b *rateBatch) {
	bs.mu.Lock()
	c := bs.budgets[budget]
	if c.inflight == b.done {
		c.inflight = nil
	}
	if c.inflight == nil && c.open == nil {
		delete(bs.budgets, budget)
	}
	bs.mu.Unlock()
	close(b.done)
}

// waiting is how many callers wait in the budget's open batch (tests).
func (bs *rateBatches) waiting(budget string) int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if c := bs.budgets[budget]; c != nil && c.open != nil {
		return c.open.n
	}
	return 0
}
