package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// advancer records the worker's calls and answers as told.
type advancer struct {
	clock    quartz.Clock // dates the calls (the real clock when nil)
	mu       sync.Mutex
	advances []string
	called   chan advanceCall  // when set, each Advance is sent there
	answer   func(n int) error // the n-th Advance's answer (from 1)
	block    chan struct{}     // when set, Advance waits for it
	failed   chan error
}

// advanceCall is one Advance: the run, and when (on the advancer's clock).
type advanceCall struct {
	run string
	at  time.Time
}

func (a *advancer) Advance(ctx context.Context, runID string) error {
	a.mu.Lock()
	a.advances = append(a.advances, runID)
	n := len(a.advances)
	a.mu.Unlock()
	if a.called != nil {
		clock := a.clock
		if clock == nil {
			clock = quartz.NewReal()
		}
		a.called <- advanceCall{run: runID, at: clock.Now()}
	}
	if a.block != nil {
		select {
		case <-a.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if a.answer != nil {
		return a.answer(n)
	}
	return nil
}

func (a *advancer) Fail(_ context.Context, _ string, cause error) error {
	a.failed <- cause
	return nil
}

func (a *advancer) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.advances)
}

// startWorker starts a worker of the "runs" queue (unless opts names
// queues) that stops when the test ends.
func startWorker(t *testing.T, rdb *redis.Client, adv Advancer, opts WorkerOptions) *Worker {
	t.Helper()
	if opts.Queues == nil {
		opts.Queues = []string{"runs"}
	}
	w := NewWorker(rdb, adv, opts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func newQueue(t *testing.T, rdb *redis.Client) *Queue {
	t.Helper()
	q := NewQueue(rdb, QueueOptions{})
	return q
}

// next waits for the advancer's next call.
func next(t *testing.T, a *advancer) advanceCall {
	t.Helper()
	select {
	case c := <-a.called:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no run was advanced")
	}
	return advanceCall{}
}

// waitFor polls cond until it holds (the condition is on another process's
// state: Redis, a worker's goroutines), failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestWakeUpsCollapseAndALocalOneSendsNothing: wake-ups of a run this
// process advances already collapse into one more advance after it, and a
// wake-up the local worker takes sends no
// command to Redis at all. With no free slot, the wake-up is published for
// the other workers, and this one takes it when its slot frees.
func TestWakeUpsCollapseAndALocalOneSendsNothing(t *testing.T) {
	_, rdb := redistest.Start(t)
	cmds := &namedCommands{}
	watched := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr})
	t.Cleanup(func() { _ = watched.Close() })
	watched.AddHook(cmds)
	q := NewQueue(watched, QueueOptions{})
	block := make(chan struct{})
	adv := &advancer{block: block, called: make(chan advanceCall, 8)}
	w := startWorker(t, watched, adv, WorkerOptions{Concurrency: 1, Lease: time.Hour})
	q.RunLocally(w)
	ctx := context.Background()
	waitFor(t, "the first pass", func() bool { return cmds.count("evalsha")+cmds.count("eval") >= 1 })
	before := len(cmds.snapshot())
	for range 3 {
		if err := q.Wake(ctx, "runs", "r-1"); err != nil {
			t.Fatal(err)
		}
	}
	if c := next(t, adv); c.run != "r-1" {
		t.Fatalf("advanced %s", c.run)
	}
	if sent := cmds.snapshot()[before:]; len(sent) != 0 {
		t.Errorf("local wake-ups sent %v to Redis, want nothing", sent)
	}
	// No free slot: published, and taken here once the slot frees.
	sub := rdb.Subscribe(ctx, wakeChannel(DefaultPrefix, "runs"))
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Wake(ctx, "runs", "r-2"); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "r-2" {
		t.Fatalf("published %v (%v), want r-2", msg, err)
	}
	close(block)
	// r-1 was woken again while it was advanced: once more (its first
	// advance may have read it before the wake-up's save), then r-2.
	for _, want := range []string{"r-1", "r-2"} {
		if c := next(t, adv); c.run != want {
			t.Fatalf("advanced %s after the slot freed, want %s", c.run, want)
		}
	}
	waitFor(t, "the advances to end", func() bool { return len(w.slots) == 0 })
	adv.mu.Lock()
	defer adv.mu.Unlock()
	// (r-2 may be advanced once more: this worker hears its own published
	// hint too, perhaps after the backlog took r-2. A hint is a hint.)
	if n := slices.Index(adv.advances, "r-2"); n != 2 || slices.Contains(adv.advances[n+1:], "r-1") {
		t.Errorf("advances %v for three wake-ups of r-1 and one of r-2, want r-1 twice, then r-2", adv.advances)
	}
}

// TestAWakeUpFromAProcessWithoutAWorkerIsTakenAtOnce: a process that
// serves no queue (a bot replica) publishes the wake-up, and a worker
// elsewhere starts the advance well within 50 ms (the best of three; it
// waited for a 200 ms poll before).
func TestAWakeUpFromAProcessWithoutAWorkerIsTakenAtOnce(t *testing.T) {
	_, rdb := redistest.Start(t)
	adv := &advancer{called: make(chan advanceCall, 8)}
	startWorker(t, rdb, adv, WorkerOptions{Lease: time.Hour})
	_, other := redistest.Connect(t, "redis://"+rdb.Options().Addr)
	q := newQueue(t, other)
	var best time.Duration
	for i := range 3 {
		sent := time.Now()
		if err := q.Wake(context.Background(), "runs", fmt.Sprint("r-", i)); err != nil {
			t.Fatal(err)
		}
		c := next(t, adv)
		if took := c.at.Sub(sent); i == 0 || took < best {
			best = took
		}
	}
	t.Logf("a published wake-up was taken %v after it was sent", best)
	if best > 50*time.Millisecond {
		t.Errorf("a published wake-up waited %v for a worker, want < 50ms", best)
	}
}

// TestARetryIsMadeAtItsTimeAndABusyRunIsNot: a *pipeline.RetryError is
// tried again after the engine's delay, by this process; a busy lease and
// a missing run are not tried again.
func TestARetryIsMadeAtItsTimeAndABusyRunIsNot(t *testing.T) {
	_, rdb := redistest.Start(t)
	adv := &advancer{called: make(chan advanceCall, 8), answer: func(n int) error {
		switch n {
		case 1, 2:
			return &pipeline.RetryError{Step: pipeline.StepPlan, Attempt: n, After: 300 * time.Millisecond, Err: errors.New("model down")}
		case 3:
			return fmt.Errorf("lease: %w", pipeline.ErrLeaseBusy)
		}
		return fmt.Errorf("run: %w", pipeline.ErrNotFound)
	}}
	w := startWorker(t, rdb, adv, WorkerOptions{Lease: time.Hour})
	q := newQueue(t, rdb)
	q.RunLocally(w)
	if err := q.Wake(context.Background(), "runs", "r-1"); err != nil {
		t.Fatal(err)
	}
	first := next(t, adv)
	// Until its retry, no pass of any replica takes the run.
	var ttl time.Duration
	waitFor(t, "the claim until the retry", func() bool {
		ttl = rdb.PTTL(context.Background(), claimKey(DefaultPrefix, "r-1")).Val()
		return ttl > 0
	})
	if ttl > 300*time.Millisecond {
		t.Errorf("the run is claimed for %v until its retry, want up to 300ms", ttl)
	}
	for range 2 {
		c := next(t, adv)
		if gap := c.at.Sub(first.at); gap < 300*time.Millisecond {
			t.Errorf("tried again %v after the failure, want at least the engine's 300ms", gap)
		}
		first = c
	}
	waitFor(t, "the retries to end", func() bool { return w.retries("runs") == 0 })
	if err := q.Wake(context.Background(), "runs", "r-2"); err != nil {
		t.Fatal(err)
	}
	next(t, adv)
	waitFor(t, "the missing run to be dropped", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.inflight) == 0
	})
	if n := w.retries("runs"); n != 0 {
		t.Errorf("%d runs wait for a retry after a busy lease and a missing run, want 0", n)
	}
}

// TestARunThatKeepsFailingIsEnded: after MaxRetry failures in a row
// outside its steps, the run is ended with the cause.
func TestARunThatKeepsFailingIsEnded(t *testing.T) {
	_, rdb := redistest.Start(t)
	adv := &advancer{failed: make(chan error, 1), answer: func(int) error { return errors.New("presenter down") }}
	w := startWorker(t, rdb, adv, WorkerOptions{Lease: time.Hour, MaxRetry: 3, RetryDelay: func(int, error) time.Duration { return time.Millisecond }})
	q := newQueue(t, rdb)
	q.RunLocally(w)
	if err := q.Wake(context.Background(), "runs", "r-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-adv.failed:
		if err == nil || err.Error() != "presenter down" {
			t.Errorf("ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the failing run was not ended")
	}
	if n := adv.calls(); n != 4 {
		t.Errorf("%d attempts before the run was ended, want 1 + MaxRetry (4)", n)
	}
}

// TestShutdownHandsTheRunBackToAnotherWorkerAtOnce: a worker stopping
// with a run in flight waits its shutdown timeout, cancels the advance
// (the engine hands the run back) and publishes a wake-up, which another
// replica takes at once.
func TestShutdownHandsTheRunBackToAnotherWorkerAtOnce(t *testing.T) {
	_, rdb := redistest.Start(t)
	first := &advancer{block: make(chan struct{}), called: make(chan advanceCall, 1)}
	w := NewWorker(rdb, first, WorkerOptions{Queues: []string{"runs"}, Lease: time.Hour, ShutdownTimeout: 50 * time.Millisecond})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	q := newQueue(t, rdb)
	q.RunLocally(w)
	if err := q.Wake(context.Background(), "runs", "r-1"); err != nil {
		t.Fatal(err)
	}
	next(t, first)
	other := &advancer{called: make(chan advanceCall, 1)}
	startWorker(t, rdb, other, WorkerOptions{Lease: time.Hour})
	stopped := time.Now()
	w.Stop()
	c := next(t, other)
	t.Logf("handed back and taken by another worker %v after Stop began (shutdown timeout 50ms)", c.at.Sub(stopped))
	if c.run != "r-1" || c.at.Sub(stopped) > time.Second {
		t.Errorf("the other worker took %s %v after Stop began", c.run, c.at.Sub(stopped))
	}
}

// TestACancelIsInTheWorkIndex: a cancel request puts a waiting run in its
// queue's work index (a pass finds it even if no wake-up arrives), and the
// save that ends the run takes it out again.
func TestACancelIsInTheWorkIndex(t *testing.T) {
	for _, embedded := range []bool{false, true} {
		t.Run(fmt.Sprint("embedded=", embedded), func(t *testing.T) {
			var rdb *redis.Client
			if embedded {
				conn, err := Connect(context.Background(), "", ConnOptions{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = conn.Close() })
				rdb = conn.Client
			} else {
				_, rdb = redistest.Start(t)
			}
			s := NewStore(rdb, "")
			ctx := context.Background()
			waitAt(t, s, "r-1", t0.Add(time.Hour))
			if n := rdb.ZCard(ctx, "rb:work:runs").Val(); n != 0 {
				t.Fatalf("a waiting run is in the work index (%d)", n)
			}
			if err := s.RequestCancel(ctx, "r-1", "U1"); err != nil {
				t.Fatal(err)
			}
			if ids, _ := s.WorkRuns(ctx, "runs", time.Now().Add(time.Hour), 10); len(ids) != 1 || ids[0] != "r-1" {
				t.Fatalf("after the cancel request the work index has %v, want r-1", ids)
			}
			r, err := s.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			r.Status, r.Presented = pipeline.StatusCancelled, true
			if err := s.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			if n := rdb.ZCard(ctx, "rb:work:runs").Val(); n != 0 {
				t.Errorf("the ended run is still in the work index (%d)", n)
			}
		})
	}
}

// TestANewQueuesWorkerSubscribesOnlyWhenAskedTo: the worker of a queue
// made for this process (NewQueues) advances the runs woken here without
// subscribing to the queue's wake channel (a connection, its HELLO and a
// SUBSCRIBE); once Listen is called it subscribes, and takes at once a
// wake-up another process publishes.
func TestANewQueuesWorkerSubscribesOnlyWhenAskedTo(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	adv := &advancer{called: make(chan advanceCall, 8)}
	w := startWorker(t, rdb, adv, WorkerOptions{Queues: []string{"terminal-x"}, NewQueues: true, Lease: time.Hour})
	q := newQueue(t, rdb)
	q.RunLocally(w)
	for i := range 3 {
		if err := q.Wake(ctx, "terminal-x", fmt.Sprint("r-", i)); err != nil {
			t.Fatal(err)
		}
		next(t, adv)
	}
	// (Asked 50 times: a subscription made at Start, in the background,
	// would be there within the first few.)
	for range 50 {
		if n := rdb.PubSubNumSub(ctx, "rb:wake:terminal-x").Val()["rb:wake:terminal-x"]; n != 0 {
			t.Fatalf("%d subscribers to the new queue's wake channel before Listen, want 0", n)
		}
	}
	w.Listen()
	w.Listen() // once
	waitFor(t, "the subscription", func() bool {
		return rdb.PubSubNumSub(ctx, "rb:wake:terminal-x").Val()["rb:wake:terminal-x"] == 1
	})
	_, other := redistest.Connect(t, "redis://"+rdb.Options().Addr)
	if err := newQueue(t, other).Wake(ctx, "terminal-x", "r-elsewhere"); err != nil {
		t.Fatal(err)
	}
	if c := next(t, adv); c.run != "r-elsewhere" {
		t.Errorf("advanced %s, want the run woken by another process", c.run)
	}
}
