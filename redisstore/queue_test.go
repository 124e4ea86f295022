package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// advancer records the worker's calls and answers as told.
type advancer struct {
	mu       sync.Mutex
	advances []string
	timers   chan timerCall
	answer   func(n int) error // the n-th Advance's answer (from 1)
	block    chan struct{}     // when set, Advance waits for it
	failed   chan error
}

type timerCall struct {
	at, deadline time.Time
}

func (a *advancer) Advance(ctx context.Context, runID string) error {
	a.mu.Lock()
	a.advances = append(a.advances, runID)
	n := len(a.advances)
	a.mu.Unlock()
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

func (a *advancer) CheckTimeout(_ context.Context, _, _ string, deadline time.Time) error {
	a.timers <- timerCall{at: time.Now(), deadline: deadline}
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

func startWorker(t *testing.T, rdb *redis.Client, adv Advancer, opts WorkerOptions) {
	t.Helper()
	if opts.Queues == nil {
		opts.Queues = map[string]int{"runs": 1}
	}
	w := NewWorker(rdb, adv, opts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

func newQueue(t *testing.T, rdb *redis.Client) *Queue {
	t.Helper()
	q := NewQueue(rdb, QueueOptions{})
	t.Cleanup(func() { _ = q.Close() })
	return q
}

func TestWakeUpsOfOneVersionCollapse(t *testing.T) {
	_, rdb := redistest.Start(t)
	q := newQueue(t, rdb)
	ctx := context.Background()
	for range 3 {
		if err := q.Enqueue(ctx, "runs", "r-1", 7); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Enqueue(ctx, "runs", "r-1", 8); err != nil {
		t.Fatal(err)
	}
	pending, err := q.inspector.ListPendingTasks("runs")
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 {
		t.Fatalf("%d tasks queued for versions 7 (×3) and 8, want 2", len(pending))
	}
	// A task asynq archived (a dead end) does not swallow the next wake-up.
	if err := q.inspector.ArchiveTask("runs", "r-1:v7"); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, "runs", "r-1", 7); err != nil {
		t.Fatal(err)
	}
	if info, err := q.inspector.GetTaskInfo("runs", "r-1:v7"); err != nil || info.State != asynq.TaskStatePending {
		t.Fatalf("after an archived task, the wake-up is %v (%v), want pending", info, err)
	}
}

// TestTimersNeverFireEarly runs checkpoint timers through the real queue
// and worker: asynq keeps whole seconds and forwards due tasks on a tick,
// so the queue rounds each deadline up; no timer may fire before its
// deadline, and none more than 2 s after.
func TestTimersNeverFireEarly(t *testing.T) {
	_, rdb := redistest.Start(t)
	q := newQueue(t, rdb)
	adv := &advancer{timers: make(chan timerCall, 8)}
	startWorker(t, rdb, adv, WorkerOptions{})
	ctx := context.Background()
	base := time.Now()
	offsets := []time.Duration{300 * time.Millisecond, 1100 * time.Millisecond, 1900 * time.Millisecond, 2450 * time.Millisecond}
	for i, off := range offsets {
		if err := q.EnqueueTimer(ctx, "runs", "r-1", fmt.Sprint("r-1.", i), base.Add(off)); err != nil {
			t.Fatal(err)
		}
	}
	var worst time.Duration
	for range offsets {
		select {
		case c := <-adv.timers:
			late := c.at.Sub(c.deadline)
			worst = max(worst, late)
			if late < 0 {
				t.Errorf("a timer fired %v before its deadline", -late)
			}
			if late > 2*time.Second {
				t.Errorf("a timer fired %v after its deadline, want at most 2 s", late)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a timer never fired")
		}
	}
	t.Logf("%d timers: none early, latest %v after its deadline", len(offsets), worst.Round(time.Millisecond))
}

// TestAFailedStepIsTriedAgainAfterTheEnginesDelay: the worker hands a
// *pipeline.RetryError back to the queue with the engine's delay; a busy
// lease and a missing run are not retried.
func TestAFailedStepIsTriedAgainAfterTheEnginesDelay(t *testing.T) {
	_, rdb := redistest.Start(t)
	q := newQueue(t, rdb)
	done := make(chan struct{})
	adv := &advancer{answer: func(n int) error {
		switch n {
		case 1, 2:
			return &pipeline.RetryError{Step: pipeline.StepPlan, Attempt: n, After: 20 * time.Millisecond, Err: errors.New("model down")}
		case 3:
			close(done)
			return nil
		}
		return nil
	}}
	startWorker(t, rdb, adv, WorkerOptions{})
	if err := q.Enqueue(context.Background(), "runs", "r-1", 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("the step was not tried again (%d calls)", adv.calls())
	}

	busy := &advancer{answer: func(int) error { return fmt.Errorf("lease: %w", pipeline.ErrLeaseBusy) }}
	_, rdb2 := redistest.Start(t)
	q2 := newQueue(t, rdb2)
	startWorker(t, rdb2, busy, WorkerOptions{RetryDelay: func(int, error) time.Duration { return time.Millisecond }})
	if err := q2.Enqueue(context.Background(), "runs", "r-2", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the busy task to finish", func() bool {
		n, _ := q2.inspector.GetQueueInfo("runs")
		return busy.calls() == 1 && n != nil && n.Pending+n.Active+n.Retry == 0
	})
}

// waitFor polls cond until it holds (the condition is on another process's
// state: Redis, a queue), failing after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestALocalWakeUpQueuesNothingAndTheRescuerIsItsFallback: a wake-up the
// local worker takes at once queues no task (no queue bookkeeping beside the
// advance); if the process dies in the middle of that advance, the run is
// still found — through the store's index of runs with work — by another
// replica's rescue pass. A wake-up the worker has no slot for is queued.
func TestALocalWakeUpQueuesNothingAndTheRescuerIsItsFallback(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	r.Status = pipeline.StatusRunning
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	q := newQueue(t, rdb)
	adv := &advancer{block: make(chan struct{})}
	w := NewWorker(rdb, adv, WorkerOptions{Queues: map[string]int{"runs": 1}, Concurrency: 1, OnDemand: true, PollInterval: 20 * time.Millisecond})
	q.RunLocally(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	defer close(adv.block)

	if err := q.Enqueue(ctx, "runs", "r-1", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the local advance", func() bool { return adv.calls() == 1 })
	if keys, err := rdb.Keys(ctx, "asynq:*").Result(); err != nil || len(keys) != 0 {
		t.Fatalf("a wake-up taken at once left queue keys %v (%v), want none", keys, err)
	}

	// The advance never ends (its process is gone, and so is its lease):
	// another replica's rescue pass queues the run from the work index.
	rs := &Rescuer{Store: s, Locker: NewLocker(rdb, "", 15*time.Second), Queue: newQueue(t, rdb), Queues: []string{"runs"},
		Clock: readClock(func() time.Time { return t0.Add(time.Minute) })}
	if n, err := rs.RescueOnce(ctx); n != 1 || err != nil {
		t.Fatalf("rescued %d runs (%v), want the run whose local advance died", n, err)
	}
	pending, err := q.inspector.ListPendingTasks("runs")
	if err != nil || len(pending) != 1 {
		t.Fatalf("%d tasks pending after the rescue (%v), want 1", len(pending), err)
	}

	// No free slot: the wake-up is queued.
	if err := q.Enqueue(ctx, "runs", "r-2", 1); err != nil {
		t.Fatal(err)
	}
	if info, err := q.inspector.GetTaskInfo("runs", advanceTaskID("r-2", 1)); err != nil {
		t.Fatalf("the wake-up with no free slot was not queued: %v %v", info, err)
	}
}
