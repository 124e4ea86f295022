package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// openDB connects to srvURL and returns the DB, closed at the test's end.
func openDB(t *testing.T, srvURL string) (*DB, *Conn) {
	t.Helper()
	conn, err := Connect(context.Background(), srvURL, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return Open(conn, ""), conn
}

// createLeased stores a fresh run with its lease taken for s's Locker.
func createLeased(t *testing.T, s *Store, id string) {
	t.Helper()
	if leased, err := s.CreateLeased(context.Background(), newRun(id, "U1", t0)); err != nil || !leased {
		t.Fatalf("CreateLeased(%s) = %v, %v; want created leased", id, leased, err)
	}
}

// TestARunCreatedLeasedIsTakenByItsWorkerWithoutACommand: CreateLeased
// takes the run's lease in the create script (the lease key with its TTL,
// the fence 1 in the run's hash); the first Lock of the same DB's Locker
// adopts it and the first read under it (LoadForStep) sends nothing at
// all, where a take would be a script of three commands. The adopted
// lease is fenced as any: another process cannot take it while it is
// held, its saves carry the create's fence, and after its release the
// next holder's fence is higher and a save with the old one is refused.
func TestARunCreatedLeasedIsTakenByItsWorkerWithoutACommand(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	db, conn := openDB(t, srv.URL)
	s, l := db.Store(StoreOptions{}), db.Locker(time.Minute)
	createLeased(t, s, "r-1")
	rdb := conn.Client
	if pttl := rdb.PTTL(ctx, "rb:lock:run:r-1").Val(); pttl <= 0 || pttl > time.Minute {
		t.Fatalf("the created run's lease key has TTL %v, want the lease (1m)", pttl)
	}
	if f := rdb.HGet(ctx, "rb:run:r-1", "fence").Val(); f != "1" {
		t.Fatalf("the created run's fence is %q, want 1", f)
	}
	c := &namedCommands{}
	rdb.AddHook(c)
	lctx, lease, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	r, by, err := s.LoadForStep(lctx, "r-1")
	if err != nil || r.Version != 1 || r.Question != "q r-1" || by != "" {
		t.Fatalf("first read under the adopted lease = %+v, %q, %v", r, by, err)
	}
	if n := len(c.sent); n != 0 {
		t.Fatalf("the first Lock and read of a run created leased here sent %v, want nothing", c.sent)
	}
	if lease.Fence() != 1 {
		t.Fatalf("the adopted lease's fence is %d, want the create's 1", lease.Fence())
	}
	other := NewLocker(rdb, "", time.Minute) // another process
	if _, _, err := other.Lock(ctx, "r-1"); !errors.Is(err, pipeline.ErrLeaseBusy) {
		t.Fatalf("another process's Lock of the adopted lease = %v, want ErrLeaseBusy", err)
	}
	r.Fence, r.Status = lease.Fence(), pipeline.StatusRunning
	if err := s.Save(lctx, r); err != nil {
		t.Fatalf("a save under the adopted lease: %v", err)
	}
	lease.Release()
	if n := rdb.Exists(ctx, "rb:lock:run:r-1").Val(); n != 0 {
		t.Fatal("the adopted lease's Release left its key")
	}
	_, next, err := other.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if next.Fence() != 2 {
		t.Fatalf("the next holder's fence is %d, want 2", next.Fence())
	}
	if err := s.Save(ctx, r); !errors.Is(err, pipeline.ErrLeaseLost) {
		t.Fatalf("a save with the adopted lease's fence after the next take = %v, want ErrLeaseLost", err)
	}

	// A Create that is not leased takes no lease; a Lock then takes it.
	if err := s.Create(ctx, newRun("r-2", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	if n := rdb.Exists(ctx, "rb:lock:run:r-2").Val(); n != 0 {
		t.Fatal("Create took a lease")
	}
	_, b, err := l.Lock(ctx, "r-2")
	if err != nil || b.Fence() != 1 {
		t.Fatalf("Lock after a plain Create = fence %v, %v; want 1", b, err)
	}
	b.Release()
}

// TestACreatedLeaseThatOutlivedItsMarginIsTakenAgain: a created lease is
// adopted from memory only while it was taken less than a third of the
// lease ago on this process's clock (its holder's first refresh is then
// due before the lease could lapse); an older one is given back and taken
// anew, with a higher fence, and the create's fence no longer saves. A
// Locker whose lease differs from the create's never adopts.
func TestACreatedLeaseThatOutlivedItsMarginIsTakenAgain(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	db, conn := openDB(t, srv.URL)
	rdb := conn.Client
	base := time.Now()
	var offset time.Duration
	db.created.now = func() time.Time { return base.Add(offset) }
	s, l := db.Store(StoreOptions{}), db.Locker(time.Minute)

	offset = 0
	createLeased(t, s, "r-young")
	createLeased(t, s, "r-old")
	created := rdb.Get(ctx, "rb:lock:run:r-old").Val()
	offset = 20*time.Second - time.Millisecond // just under a third of the lease
	_, young, err := l.Lock(ctx, "r-young")
	if err != nil {
		t.Fatal(err)
	}
	defer young.Release()
	if young.Fence() != 1 {
		t.Fatalf("a lease created %v ago was taken again (fence %d), want adopted (fence 1)", offset, young.Fence())
	}
	offset = 20 * time.Second // a third of the lease: no longer certainly held long enough
	c := &namedCommands{}
	rdb.AddHook(c)
	_, old, err := l.Lock(ctx, "r-old")
	if err != nil {
		t.Fatalf("Lock of a run whose created lease outlived its margin: %v", err)
	}
	defer old.Release()
	if old.Fence() != 2 {
		t.Fatalf("a lease created %v ago has fence %d, want 2 (taken anew)", offset, old.Fence())
	}
	if c.count("evalsha")+c.count("eval") < 2 {
		t.Errorf("the outlived lease was not given back and taken with scripts: %v", c.sent)
	}
	if now := rdb.Get(ctx, "rb:lock:run:r-old").Val(); now == created || now == "" {
		t.Errorf("the lease key holds %q after the take, want a new token", now)
	}
	r, err := s.Load(ctx, "r-old")
	if err != nil {
		t.Fatal(err)
	}
	r.Fence = 1
	if err := s.Save(ctx, r); !errors.Is(err, pipeline.ErrLeaseLost) {
		t.Errorf("a save with the create's fence after the lease was taken again = %v, want ErrLeaseLost", err)
	}

	// A Locker of another lease length takes the lease anew too.
	offset = 0
	createLeased(t, s, "r-other")
	short := db.Locker(30 * time.Second)
	_, o, err := short.Lock(ctx, "r-other")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Release()
	if o.Fence() != 2 {
		t.Errorf("a Locker with another lease adopted the created one (fence %d), want it taken anew (2)", o.Fence())
	}
}

// fencingAdvancer takes each run's lease with its Locker, notes the fence,
// and gives the lease back.
type fencingAdvancer struct {
	l      *Locker
	fences chan int64
}

func (a *fencingAdvancer) Advance(ctx context.Context, runID string) error {
	_, lease, err := a.l.Lock(ctx, runID)
	if err != nil {
		return err
	}
	defer lease.Release()
	a.fences <- lease.Fence()
	return nil
}

func (a *fencingAdvancer) Fail(context.Context, string, error) error { return nil }

// TestARunWhoseCreatorDiedBeforeItsWorkerStartedIsRecovered: a process
// that created a run leased and died before its worker took it leaves a
// lease that expires with its TTL; until then another worker's claim
// Lock is refused (ErrLeaseBusy, as for any dead holder: claim passes
// skip a leased run), and after it a claim pass takes the run, with a
// higher fence. The run is as it was created: nothing but the lease was
// added to it.
func TestARunWhoseCreatorDiedBeforeItsWorkerStartedIsRecovered(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	const lease = 1500 * time.Millisecond
	dead, deadConn := openDB(t, srv.URL)
	_ = dead.Locker(lease)
	createLeased(t, dead.Store(StoreOptions{}), "r-1")
	_ = deadConn.Close() // the creator is gone: nothing of it adopts or refreshes the lease

	db, conn := openDB(t, srv.URL)
	rdb := conn.Client
	if _, _, err := NewLocker(rdb, "", lease).Lock(ctx, "r-1"); !errors.Is(err, pipeline.ErrLeaseBusy) {
		t.Fatalf("another process's Lock while the dead creator's lease lasts = %v, want ErrLeaseBusy", err)
	}
	mock := quartz.NewMock(t)
	mock.Set(t0.Add(time.Minute))
	adv := &fencingAdvancer{l: db.Locker(lease), fences: make(chan int64, 4)}
	trap := mock.Trap().NewTicker("redisstore", "claim")
	defer trap.Close()
	startWorker(t, rdb, adv, WorkerOptions{Lease: lease, Clock: mock})
	trap.MustWait(ctx).MustRelease(ctx) // the passes' ticker runs
	waitFor(t, "the creator's lease to expire", func() bool { return rdb.Exists(ctx, "rb:lock:run:r-1").Val() == 0 })
	mock.Advance(lease / 2).MustWait(ctx) // a pass (unless the first took it already, the lease gone)
	select {
	case f := <-adv.fences:
		if f != 2 {
			t.Fatalf("the recovered run's lease has fence %d, want 2", f)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no claim pass took the run after its creator's lease expired")
	}
	r, err := NewStore(rdb, "").Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusQueued || r.Attempt.N != 0 {
		t.Errorf("the recovered run is %s with attempt %d, want it as created (queued, none counted)", r.Status, r.Attempt.N)
	}
}

// TestCreateLeasedStoresNothingWithoutItsLease: without a Locker of the
// same DB (the lease's length unknown) or with the run's lease key held
// already, CreateLeased stores nothing and says so, and the caller creates
// the run as usual.
func TestCreateLeasedStoresNothingWithoutItsLease(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	db, conn := openDB(t, srv.URL)
	rdb := conn.Client
	s := db.Store(StoreOptions{})
	if leased, err := s.CreateLeased(ctx, newRun("r-1", "U1", t0)); err != nil || leased {
		t.Fatalf("CreateLeased before any Locker = %v, %v; want false, nil", leased, err)
	}
	_ = db.Locker(time.Minute)
	rdb.Set(ctx, "rb:lock:run:r-2", "someone", time.Minute)
	if leased, err := s.CreateLeased(ctx, newRun("r-2", "U1", t0)); err != nil || leased {
		t.Fatalf("CreateLeased with the lease key held = %v, %v; want false, nil", leased, err)
	}
	if n := rdb.Exists(ctx, "rb:run:r-1", "rb:run:r-2").Val(); n != 0 {
		t.Fatalf("%d runs stored by a CreateLeased that could not lease them", n)
	}
	if got := rdb.Get(ctx, "rb:lock:run:r-2").Val(); got != "someone" {
		t.Fatalf("the held lease key now holds %q", got)
	}
}

// TestAWatchOfARunCreatedLeasedHereShowsItAsCreated: the worker of a run
// created leased saves nothing before its first step ends (the create
// counted the step's attempt), so WatchAdvancedHere sends the run as
// created first, in memory, with no command: the follower's first line
// still comes at once.
func TestAWatchOfARunCreatedLeasedHereShowsItAsCreated(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	db, conn := openDB(t, srv.URL)
	clock := quartz.NewMock(t)
	s := db.Store(StoreOptions{Clock: clock})
	_ = db.Locker(time.Minute)
	r := newRun("r-1", "U1", t0)
	r.Status, r.Attempt = pipeline.StatusRunning, pipeline.StepAttempt{Step: pipeline.StepPlan, N: 1}
	if leased, err := s.CreateLeased(ctx, r); err != nil || !leased {
		t.Fatalf("CreateLeased = %v, %v", leased, err)
	}
	c := &countCommands{}
	conn.Client.AddHook(c)
	runs := s.WatchAdvancedHere(ctx, "r-1", 0)
	select {
	case got := <-runs:
		if got.Version != 1 || got.Status != pipeline.StatusRunning || got.Attempt.N != 1 || got.Question != "q r-1" {
			t.Errorf("first run sent = v%d %s attempt %d, want the run as created (v1, running, attempt 1)", got.Version, got.Status, got.Attempt.N)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch sent nothing for a run created leased here")
	}
	if n := c.n.Load(); n != 0 {
		t.Errorf("the watch sent %d commands to show the run as created, want 0", n)
	}
	cancel()
	for range runs {
	}
}
