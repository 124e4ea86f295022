package redisstore

import (
	"context"
	"fmt"
	"strings"
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

// waitAt saves a run of queue "runs" waiting at a checkpoint whose
// deadline is deadline.
func waitAt(t *testing.T, s *Store, id string, deadline time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := s.Create(ctx, newRun(id, "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	def := checkpoints.Builtins(t0)[0]
	def.Timeout = deadline.Sub(t0)
	inst := checkpoints.NewInstance(def, id+".x", id, nil, nil, nil, t0)
	_ = inst.Offer(t0, "engine")
	r.Checkpoints, r.Waiting, r.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
}

// TestARunSavedWithWorkButNeverWokenIsAdvancedByAPass: nothing but the
// save (no wake-up at all) is needed for a run to be advanced: a pass
// takes a run with work and no worker once its last save is half a lease
// old — the first pass at start, and the periodic ones after.
func TestARunSavedWithWorkButNeverWokenIsAdvancedByAPass(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-old", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	mock := quartz.NewMock(t)
	now := t0.Add(time.Minute)
	mock.Set(now)
	fresh := newRun("r-fresh", "U1", now.Add(-time.Millisecond))
	if err := s.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	// The advances never end: the claims stay, as the engine's advance
	// would have left the runs without work.
	adv := &advancer{clock: mock, called: make(chan advanceCall, 8), block: make(chan struct{})}
	defer close(adv.block)
	startWorker(t, rdb, adv, WorkerOptions{Lease: 10 * time.Second, Clock: mock})
	if c := next(t, adv); c.run != "r-old" {
		t.Fatalf("the first pass took %s, want r-old (r-fresh was saved just now)", c.run)
	}
	mock.Advance(5 * time.Second).MustWait(ctx)
	if c := next(t, adv); c.run != "r-fresh" {
		t.Fatalf("the next pass took %s, want r-fresh", c.run)
	}
	if n := adv.calls(); n != 2 {
		t.Errorf("%d advances, want 2", n)
	}
}

// TestATimerFiresExactlyAtItsDeadline: the worker arms its one timer at
// the earliest deadline in its queue's index; on the mock clock it takes
// the run at the deadline, not a millisecond before. A deadline between
// two milliseconds fires at the next one. A deadline published by a
// process that serves no queue re-arms the timer.
func TestATimerFiresExactlyAtItsDeadline(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	deadline := t0.Add(time.Minute + 400*time.Microsecond)
	waitAt(t, s, "r-1", deadline)
	mock := quartz.NewMock(t)
	mock.Set(t0)
	trap := mock.Trap().AfterFunc("redisstore", "deadline")
	defer trap.Close()
	adv := &advancer{clock: mock, called: make(chan advanceCall, 8)}
	w := startWorker(t, rdb, adv, WorkerOptions{Lease: 10 * time.Minute, Clock: mock})
	call := trap.MustWait(ctx)
	call.MustRelease(ctx)
	want := t0.Add(time.Minute + time.Millisecond)
	if call.Duration != want.Sub(t0) {
		t.Fatalf("the timer was armed for %v, want %v (the deadline rounded up to the ms)", call.Duration, want.Sub(t0))
	}
	mock.Advance(want.Sub(t0) - time.Millisecond).MustWait(ctx)
	if n := adv.calls(); n != 0 {
		t.Fatalf("the run was advanced %d times 1 ms before its deadline", n)
	}
	mock.Advance(time.Millisecond).MustWait(ctx)
	c := next(t, adv)
	if c.run != "r-1" || c.at.Before(deadline) || c.at.Sub(deadline) > time.Millisecond {
		t.Fatalf("took %s at %v, want r-1 at its deadline %v", c.run, c.at, deadline)
	}

	// A deadline announced by another process arms the timer.
	_, other := redistest.Connect(t, "redis://"+rdb.Options().Addr)
	q := newQueue(t, other)
	at := mock.Now().Add(time.Second)
	if err := q.WakeAt(ctx, "runs", at); err != nil {
		t.Fatal(err)
	}
	call = trap.MustWait(ctx)
	call.MustRelease(ctx)
	if got := w.timers.armed(); got != at.UnixMilli() {
		t.Errorf("armed for %v after the hint, want %v", time.UnixMilli(got), at)
	}
}

// TestAPassFindsItsQueuesRunsPastAbandonedTerminalRuns: 150 terminal runs
// abandoned in the middle of a step (their process killed) do not hide a
// Slack run whose worker died: each queue has its own index. A leased run
// is left to its holder, a run claimed by another replica's pass is not
// taken (and its claim is given back when its advance ends), and abandoned terminal runs are marked interrupted after four leases.
func TestAPassFindsItsQueuesRunsPastAbandonedTerminalRuns(t *testing.T) {
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
	if err := s.Create(ctx, newRun("r-leased", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	l := NewLocker(rdb, "", 15*time.Second)
	_, lease, err := l.Lock(ctx, "r-leased")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()

	gone := &interrupter{}
	now := t0.Add(20 * time.Second) // past the grace of half a lease
	adv := &advancer{called: make(chan advanceCall, 8), block: make(chan struct{})}
	w := NewWorker(rdb, adv, WorkerOptions{Queues: []string{"runs"}, Lease: 15 * time.Second, Clock: readClock(func() time.Time { return now }),
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: gone})
	t.Cleanup(w.Stop)
	if age, _ := w.OldestUnleased(ctx); age != 19*time.Second {
		t.Errorf("oldest unleased run age %v, want 19s (r-slack; r-leased is held)", age)
	}
	n, err := w.PassOnce(ctx)
	if err != nil || n != 1 {
		t.Fatalf("took %d (%v), want 1: the Slack run and not the leased one", n, err)
	}
	if c := next(t, adv); c.run != "r-slack" {
		t.Fatalf("advanced %s", c.run)
	}
	// Another replica's pass, while this one takes the run, leaves it.
	other := NewWorker(rdb, &advancer{}, WorkerOptions{Queues: []string{"runs"}, Lease: 15 * time.Second, Clock: readClock(func() time.Time { return now })})
	t.Cleanup(other.Stop)
	if n, _ := other.PassOnce(ctx); n != 0 {
		t.Errorf("another pass took %d runs claimed already", n)
	}
	close(adv.block)
	waitFor(t, "the claim to be given back", func() bool { return rdb.Exists(ctx, claimKey(DefaultPrefix, "r-slack")).Val() == 0 })
	if len(gone.ids) != 0 {
		t.Fatalf("terminal runs marked interrupted after 20 s: %v", gone.ids)
	}
	now = t0.Add(61 * time.Second)
	if _, err := w.PassOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(gone.ids) != 150 {
		t.Fatalf("%d abandoned terminal runs marked interrupted, want 150", len(gone.ids))
	}
}

// TestADeadWorkersRunIsTakenOverWithinTwoLeases: a worker died holding a
// run's lease (nobody refreshes it); a worker of another process takes the
// run over by itself within 2×RUN_LEASE of the death.
func TestADeadWorkersRunIsTakenOverWithinTwoLeases(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	const lease = 400 * time.Millisecond
	r := newRun("r-1", "U1", time.Now())
	r.Status = pipeline.StatusRunning
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	died := time.Now()
	if err := rdb.Set(ctx, "rb:lock:run:r-1", "dead worker", lease).Err(); err != nil {
		t.Fatal(err)
	}
	adv := &advancer{called: make(chan advanceCall, 1)}
	startWorker(t, rdb, adv, WorkerOptions{Lease: lease})
	c := next(t, adv)
	took := c.at.Sub(died)
	t.Logf("taken over %v after the death (RUN_LEASE %v)", took, lease)
	if took < lease || took > 2*lease {
		t.Errorf("taken over %v after the death, want between one lease (its expiry) and two", took)
	}
}

// TestQueueStatsAreReadFromTheIndexes: the queue gauges count what the
// indexes say — a run with work nobody holds is pending, one whose lease
// is held is active, a deadline still to come is scheduled — and the
// latency is the pending run's time since its last save.
func TestQueueStatsAreReadFromTheIndexes(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	pending := newRun("r-pending", "U1", t0)
	pending.Status = pipeline.StatusRunning
	if err := s.Create(ctx, pending); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, newRun("r-leased", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	_, lease, err := NewLocker(rdb, "", 15*time.Second).Lock(ctx, "r-leased")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	waitAt(t, s, "r-waiting", t0.Add(time.Hour))

	now := t0.Add(30 * time.Second)
	q := NewQueue(rdb, QueueOptions{Clock: readClock(func() time.Time { return now })})
	stats, err := q.Stats(ctx, []string{"runs", "never-used"})
	if err != nil {
		t.Fatal(err)
	}
	want := QueueStat{Pending: 1, Active: 1, Scheduled: 1, Latency: 30 * time.Second}
	if got := stats["runs"]; got != want {
		t.Errorf("Stats[runs] = %+v, want %+v", got, want)
	}
	if got := stats["never-used"]; got != (QueueStat{}) {
		t.Errorf("Stats of a queue that never held a run = %+v, want zeros", got)
	}
}
