package redisstore

import (
	"context"
	"sync"
	"time"
)

// groupCommit gathers the calls for one key that arrive while a call for
// that key is on its way to Redis, so that they go together in the next
// call (group commit): nobody waits for a batch to fill; the first call goes
// at once, and those that come meanwhile wait only for it to end. T is what
// a batch carries: its calls and their replies. The rate limiter groups by
// budget (rateBatches), the page cache by nothing (one key).
type groupCommit[T any] struct {
	mu   sync.Mutex
	keys map[string]*groupCalls[T]
}

// groupCalls is one key's calls: the batch on its way to Redis (its done,
// nil when none) and the batch gathering behind it.
type groupCalls[T any] struct {
	inflight chan struct{}
	open     *groupBatch[T]
}

// groupBatch is calls that go to Redis together.
type groupBatch[T any] struct {
	done  chan struct{} // closed when the replies are in
	calls int           // how many calls joined it
	data  T
}

// groupSendTimeout bounds a call that carries other callers' calls: it is
// not bound to its leader's context, so one caller's cancellation does not
// fail the others.
const groupSendTimeout = 5 * time.Second

// do adds a call to key's batch (add, run under the lock, records it in the
// batch's data and returns its index there). The caller that opens a batch
// leads it: once the batch before it has ended, it closes the batch to
// newcomers and sends it (send gets the number of calls and the data to
// fill with the replies), then wakes the others. The others wait for their
// batch's replies, or for ctx (then err is ctx's cause). lead says whether
// this caller sent the batch.
func (g *groupCommit[T]) do(ctx context.Context, key string, add func(*T) int, send func(ctx context.Context, calls int, data *T)) (b *groupBatch[T], i int, lead bool, err error) {
	b, i, lead, prev := g.join(key, add)
	if !lead {
		select {
		case <-b.done:
			return b, i, false, nil
		case <-ctx.Done():
			return nil, 0, false, context.Cause(ctx)
		}
	}
	if prev != nil {
		<-prev // the batch before this one: it ends with its own replies
	}
	calls := g.start(key, b)
	sendCtx := ctx
	if calls > 1 {
		var cancel context.CancelFunc
		sendCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), groupSendTimeout)
		defer cancel()
	}
	send(sendCtx, calls, &b.data)
	g.finish(key, b)
	return b, i, true, nil
}

// join adds a call to key's open batch, or opens one; its opener leads it,
// at once when no batch is on its way (prev nil), else after prev.
func (g *groupCommit[T]) join(key string, add func(*T) int) (b *groupBatch[T], i int, lead bool, prev chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = map[string]*groupCalls[T]{}
	}
	c := g.keys[key]
	if c == nil {
		c = &groupCalls[T]{}
		g.keys[key] = c
	}
	if c.open != nil {
		c.open.calls++
		return c.open, add(&c.open.data), false, nil
	}
	b = &groupBatch[T]{done: make(chan struct{}), calls: 1}
	i = add(&b.data)
	if c.inflight == nil {
		c.inflight = b.done
		return b, i, true, nil
	}
	c.open = b
	return b, i, true, c.inflight
}

// start closes the leader's batch to newcomers (once the batch before it
// has ended) and returns how many calls it carries.
func (g *groupCommit[T]) start(key string, b *groupBatch[T]) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.keys[key]
	if c.open == b {
		c.open = nil
	}
	c.inflight = b.done
	return b.calls
}

// finish records that the leader's batch has ended and wakes its callers.
func (g *groupCommit[T]) finish(key string, b *groupBatch[T]) {
	g.mu.Lock()
	c := g.keys[key]
	if c.inflight == b.done {
		c.inflight = nil
	}
	if c.inflight == nil && c.open == nil {
		delete(g.keys, key)
	}
	g.mu.Unlock()
	close(b.done)
}
