package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// createRun stores a fresh run for lease tests.
func createRun(t *testing.T, s *Store, id string) {
	t.Helper()
	if err := s.Create(context.Background(), newRun(id, "U1", t0)); err != nil {
		t.Fatal(err)
	}
}

func TestLeaseIsExclusiveAndEachHoldingHasAHigherFence(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	createRun(t, s, "r-1")
	l := NewLocker(rdb, "", 3*time.Second)
	ctx := context.Background()
	lctx, a, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Lock(ctx, "r-1"); !errors.Is(err, pipeline.ErrLeaseBusy) {
		t.Fatalf("second Lock while held = %v, want ErrLeaseBusy", err)
	}
	a.Release()
	a.Release() // idempotent
	if !errors.Is(context.Cause(lctx), context.Canceled) {
		t.Fatalf("a released lease's context: %v", context.Cause(lctx))
	}
	_, b, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	defer b.Release()
	if b.Fence() <= a.Fence() {
		t.Fatalf("fences %d then %d: an acquisition must raise the fence", a.Fence(), b.Fence())
	}
	if _, _, err := l.Lock(ctx, "r-missing"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("Lock of a missing run = %v, want ErrNotFound", err)
	}
}

// TestAStaleHoldersSaveIsRefused: a worker whose lease was taken over
// cannot overwrite the run, even though it read the current version.
func TestAStaleHoldersSaveIsRefused(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	createRun(t, s, "r-1")
	l := NewLocker(rdb, "", 3*time.Second)
	ctx := context.Background()
	actx, a, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	stale, _ := s.Load(ctx, "r-1")
	stale.Fence = a.Fence()

	// A's lease expires (its process froze); B takes the run over.
	expired := time.Now()
	if err := rdb.Del(ctx, "rb:lock:run:r-1").Err(); err != nil {
		t.Fatal(err)
	}
	_, b, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()

	stale.Step = pipeline.StepFallback
	if err := s.Save(ctx, stale); !errors.Is(err, pipeline.ErrLeaseLost) {
		t.Fatalf("stale holder's save = %v, want ErrLeaseLost", err)
	}
	fresh, _ := s.Load(ctx, "r-1")
	fresh.Fence = b.Fence()
	fresh.Step = pipeline.StepSearch
	if err := s.Save(ctx, fresh); err != nil {
		t.Fatalf("the new holder's save: %v", err)
	}
	// A notices at its next refresh, within one refresh interval (TTL/3).
	<-actx.Done()
	took := time.Since(expired)
	t.Logf("stale holder's step context cancelled %v after its lease was taken (refresh interval %v)", took.Round(time.Millisecond), l.TTL()/3)
	if !errors.Is(context.Cause(actx), pipeline.ErrLeaseLost) {
		t.Fatalf("cause %v, want ErrLeaseLost", context.Cause(actx))
	}
	if took > l.TTL()/3+500*time.Millisecond {
		t.Errorf("cancelled after %v, want within one refresh interval (%v)", took, l.TTL()/3)
	}
	// A save without a fence (a person's decision) still works by version alone.
	fresh.Fence = 0
	if err := s.Save(ctx, fresh); err != nil {
		t.Fatalf("unfenced save: %v", err)
	}
}

// TestAHolderThatCannotRefreshStopsBeforeItsLeaseCouldBeTaken: when Redis
// stops answering, the holder cancels its step at 2/3 of the lease after its
// last refresh, before the lease can expire and be taken by another worker.
func TestAHolderThatCannotRefreshStopsBeforeItsLeaseCouldBeTaken(t *testing.T) {
	srv, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	createRun(t, s, "r-1")
	ttl := 1500 * time.Millisecond
	_, rw := Timeouts(ttl)
	worker := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: rw, WriteTimeout: rw, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer worker.Close()
	l := NewLocker(worker, "", ttl)
	ctx := context.Background()
	acquired := time.Now()
	lctx, lease, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	// Redis stops answering everyone for longer than the lease.
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", (ttl + 500*time.Millisecond).Milliseconds(), "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	<-lctx.Done()
	took := time.Since(acquired)
	t.Logf("with Redis paused, the step was cancelled %v after the lease was taken (lease %v, gives up at %v)", took.Round(time.Millisecond), ttl, 2*ttl/3)
	if !errors.Is(context.Cause(lctx), pipeline.ErrLeaseLost) {
		t.Fatalf("cause %v, want ErrLeaseLost", context.Cause(lctx))
	}
	if took >= ttl {
		t.Fatalf("cancelled after %v: the lease (%v) may already have been taken by another worker", took, ttl)
	}
}

// TestATakenLeaseIsAnsweredByItsHolderOnly: the acquisition sent again by
// its holder (a reply lost on the way) gets the same fence, another
// worker gets none, and a run that does not exist is not found.
func TestATakenLeaseIsAnsweredByItsHolderOnly(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	if err := NewStore(rdb, "").Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	acquire := func(runID, token string) int64 {
		t.Helper()
		n, _, err := acquireReply(acquireScript.Run(ctx, rdb, []string{"rb:lock:run:" + runID, "rb:run:" + runID}, token, 15000))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if f := acquire("r-1", "a"); f != 1 {
		t.Fatalf("first fence %d, want 1", f)
	}
	if f := acquire("r-1", "a"); f != 1 {
		t.Errorf("the holder's retried acquisition got fence %d, want 1 again", f)
	}
	if f := acquire("r-1", "b"); f != 0 {
		t.Errorf("another worker got fence %d while the lease is held, want 0", f)
	}
	if f := acquire("r-none", "a"); f != -1 {
		t.Errorf("a missing run got %d, want -1", f)
	}
}

// TestAFinishedRunsLastSaveGivesTheLeaseBack: the save that records a
// finished run as shown, made under the lease, deletes the lease key in the
// same step as its fence check, and the lease's Release then sends nothing
// (store and locker of one DB); the next worker takes the lease at once. A
// holder whose fence moved (another worker took the lease) neither saves
// nor touches the new holder's lease.
func TestAFinishedRunsLastSaveGivesTheLeaseBack(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	conn, err := Connect(ctx, srv.URL, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	db := Open(conn, "")
	s, l := db.Store(StoreOptions{}), db.Locker(time.Minute)
	finish := func(id string, fence int64) error {
		r, err := s.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		r.Fence, r.Status, r.Presented = fence, pipeline.StatusCompleted, true
		return s.Save(ctx, r)
	}
	createRun(t, s, "r-1")
	lctx, lease, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := finish("r-1", lease.Fence()); err != nil {
		t.Fatal(err)
	}
	if n := conn.Client.Exists(ctx, "rb:lock:run:r-1").Val(); n != 0 {
		t.Fatal("the finished run's last save left its lease key")
	}
	c := &countCommands{}
	conn.Client.AddHook(c)
	lease.Release()
	if n := c.n.Load(); n != 0 {
		t.Errorf("Release sent %d commands after the save gave the lease back, want 0", n)
	}
	if lctx.Err() == nil {
		t.Error("Release did not end the lease's context")
	}
	if _, next, err := l.Lock(ctx, "r-1"); err != nil {
		t.Fatalf("the next worker could not take the lease: %v", err)
	} else {
		next.Release()
	}

	createRun(t, s, "r-2")
	_, a, err := l.Lock(ctx, "r-2")
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	_, b, err := l.Lock(ctx, "r-2")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if err := finish("r-2", a.Fence()); !errors.Is(err, pipeline.ErrLeaseLost) {
		t.Fatalf("a finished save with a stale fence = %v, want ErrLeaseLost", err)
	}
	if n := conn.Client.Exists(ctx, "rb:lock:run:r-2").Val(); n != 1 {
		t.Error("a stale holder's save deleted the new holder's lease")
	}
}

// TestTheFirstReadUnderALeaseTakenHereSendsNothing: the lease's script
// reads the run's version, nonce and cancel request in the step that takes
// it, so a worker's first read of a run its process created, under a lease
// the same DB's Locker took, is no command at all, and sees a cancel request
// made before the lease was taken; a run saved by anyone since it was
// created is read in full, as before.
func TestTheFirstReadUnderALeaseTakenHereSendsNothing(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	conn, err := Connect(ctx, srv.URL, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	db := Open(conn, "")
	s, l := db.Store(StoreOptions{}), db.Locker(time.Minute)
	createRun(t, s, "r-1")
	createRun(t, s, "r-2")
	if err := s.RequestCancel(ctx, "r-1", "U2"); err != nil {
		t.Fatal(err)
	}
	_, a, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	c := &countCommands{}
	conn.Client.AddHook(c)
	r, by, err := s.LoadForStep(ctx, "r-1")
	if err != nil || r.Version != 1 || r.Question != "q r-1" || by != "U2" {
		t.Fatalf("first read under the lease = %+v, %q, %v; want version 1, cancelled by U2", r, by, err)
	}
	if n := c.n.Load(); n != 0 {
		t.Errorf("the first read under a lease taken here sent %d commands, want 0", n)
	}
	other := NewStore(conn.Client, "") // another process saves r-2
	stale, err := other.Load(ctx, "r-2")
	if err != nil {
		t.Fatal(err)
	}
	stale.Step = pipeline.StepSearch
	if err := other.Save(ctx, stale); err != nil {
		t.Fatal(err)
	}
	_, b, err := l.Lock(ctx, "r-2")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if r, _, err := s.LoadForStep(ctx, "r-2"); err != nil || r.Version != 2 || r.Step != pipeline.StepSearch {
		t.Fatalf("first read of a run saved elsewhere = %+v, %v; want version 2 at search", r, err)
	}
	// What a take read is that lease's only: after its release the first
	// read asks Redis (and sees a cancel request made since).
	createRun(t, s, "r-3")
	_, d, err := l.Lock(ctx, "r-3")
	if err != nil {
		t.Fatal(err)
	}
	d.Release()
	if err := s.RequestCancel(ctx, "r-3", "U3"); err != nil {
		t.Fatal(err)
	}
	if _, by, err := s.LoadForStep(ctx, "r-3"); err != nil || by != "U3" {
		t.Errorf("first read after the lease was released = %q, %v; want cancelled by U3 (the released lease's read was used)", by, err)
	}
}
