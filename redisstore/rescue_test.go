package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

type interrupter struct {
	mu  sync.Mutex
	ids []string
}

func (i *interrupter) Interrupt(_ context.Context, id string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.ids = append(i.ids, id)
	return nil
}

// TestRescueFindsItsQueuesRunsPastAbandonedTerminalRuns: 150 terminal runs
// abandoned in the middle of a step (their process killed) do not hide a
// Slack run whose worker died: each queue has its own index.
func TestRescueFindsItsQueuesRunsPastAbandonedTerminalRuns(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	for i := range 150 {
		r := newRun(fmt.Sprintf("r-t%03d", i), "terminal", t0)
		r.Origin = pipeline.Origin{Kind: "terminal", Queue: fmt.Sprintf("terminal-%d", i%3)}
		r.Status = pipeline.StatusRunning
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	slack := newRun("r-slack", "U1", t0.Add(time.Second))
	slack.Status = pipeline.StatusRunning
	if err := s.Create(ctx, slack); err != nil {
		t.Fatal(err)
	}
	leased := newRun("r-leased", "U1", t0)
	if err := s.Create(ctx, leased); err != nil {
		t.Fatal(err)
	}
	l := NewLocker(rdb, "", 15*time.Second)
	_, lease, err := l.Lock(ctx, "r-leased")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()

	q := newQueue(t, rdb)
	gone := &interrupter{}
	now := t0.Add(20 * time.Second) // past the grace of half a lease
	rs := &Rescuer{Store: s, Locker: l, Queue: q, Queues: []string{"runs"}, Clock: readClock(func() time.Time { return now }),
		Abandoned: func(q string) bool { return len(q) > 9 && q[:9] == "terminal-" }, Interrupter: gone}
	n, err := rs.RescueOnce(ctx)
	if err != nil || n != 1 {
		t.Fatalf("rescued %d (%v), want 1: the Slack run and not the leased one", n, err)
	}
	pending, _ := q.inspector.ListPendingTasks("runs")
	if len(pending) != 1 || string(pending[0].Payload) != "r-slack" {
		t.Fatalf("queued %v", pending)
	}
	if age, _ := rs.OldestUnleased(ctx); age != 19*time.Second {
		t.Errorf("oldest unleased run age %v, want 19s (r-slack; r-leased is held)", age)
	}
	if n, _ := rs.RescueOnce(ctx); n != 0 {
		t.Errorf("a second pass in the same window rescued %d again", n)
	}
	if len(gone.ids) != 0 {
		t.Fatalf("terminal runs marked interrupted after 20 s: %v", gone.ids)
	}
	// After four leases without a worker, abandoned terminal runs are marked interrupted.
	now = t0.Add(61 * time.Second)
	if _, err := rs.RescueOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(gone.ids) != 150 {
		t.Fatalf("%d abandoned terminal runs marked interrupted, want 150", len(gone.ids))
	}
}

// TestRescueFindsALostTimer: a run waits at a checkpoint whose deadline
// passed and whose timer task was lost; a rescue pass wakes it.
func TestRescueFindsALostTimer(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	r, _ = s.Load(ctx, "r-1")
	def := checkpoints.Builtins(t0)[0]
	def.Timeout = time.Minute
	inst := checkpoints.NewInstance(def, "r-1.x", "r-1", nil, nil, nil, t0)
	_ = inst.Offer(t0, "engine")
	r.Checkpoints, r.Waiting, r.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	q := newQueue(t, rdb)
	l := NewLocker(rdb, "", 15*time.Second)
	now := t0.Add(30 * time.Second)
	rs := &Rescuer{Store: s, Locker: l, Queue: q, Queues: []string{"runs"}, Clock: readClock(func() time.Time { return now })}
	if n, _ := rs.RescueOnce(ctx); n != 0 {
		t.Fatalf("a waiting run before its deadline was rescued")
	}
	now = t0.Add(time.Minute + timerSlack + time.Second)
	if n, err := rs.RescueOnce(ctx); n != 1 || err != nil {
		t.Fatalf("a run whose timer was lost: rescued %d (%v), want 1", n, err)
	}
}

// TestRescueOfARunWhoseTaskIsStuckActive: a worker died with the run's task
// active in asynq (asynq notices after its own lease); the rescue queues a
// second task beside it rather than waiting.
func TestRescueOfARunWhoseTaskIsStuckActive(t *testing.T) {
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
	startWorker(t, rdb, adv, WorkerOptions{Concurrency: 2})
	defer close(adv.block)
	if err := q.Enqueue(ctx, "runs", "r-1", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the task to be taken", func() bool { return adv.calls() == 1 })
	l := NewLocker(rdb, "", 15*time.Second)
	rs := &Rescuer{Store: s, Locker: l, Queue: q, Queues: []string{"runs"}, Clock: readClock(func() time.Time { return t0.Add(time.Minute) })}
	if n, err := rs.RescueOnce(ctx); n != 1 || err != nil {
		t.Fatalf("rescued %d (%v)", n, err)
	}
	waitFor(t, "the rescue task to be taken", func() bool { return adv.calls() == 2 })
}

// funcClock is the real clock read through now: a test sets the time a
// pass sees.
type funcClock struct {
	quartz.Clock
	now func() time.Time
}

// readClock returns a clock that reads now.
func readClock(now func() time.Time) funcClock { return funcClock{quartz.NewReal(), now} }

// Now returns now().
func (c funcClock) Now(...string) time.Time { return c.now() }
