package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// privateProcess opens a DB on srvURL as a terminal process does: a
// NewQueues worker (not started: what matters here is that its queue is
// the process's own) serves queue.
func privateProcess(t *testing.T, srvURL, queue string) (*DB, *Store, *redis.Client) {
	t.Helper()
	db, conn := openDB(t, srvURL)
	db.Worker(&advancer{}, WorkerOptions{Queues: []string{queue}, NewQueues: true})
	return db, db.Store(StoreOptions{}), conn.Client
}

// otherProcess is a client of another process, closed at the test's end.
func otherProcess(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// createIn stores a running run (it has work) in queue.
func createIn(t *testing.T, s *Store, queue, id string) {
	t.Helper()
	r := newRun(id, "terminal", t0)
	r.Origin = pipeline.Origin{Kind: "terminal", Queue: queue}
	r.Status = pipeline.StatusRunning
	if err := s.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// saveAs loads the run through s, changes it with change and saves it.
func saveAs(t *testing.T, s *Store, id string, change func(r *pipeline.Run)) {
	t.Helper()
	r, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	change(r)
	if err := s.Save(context.Background(), r); err != nil {
		t.Fatalf("save %s: %v", id, err)
	}
}

// shown makes a run completed and its outcome shown (its last save).
func shown(r *pipeline.Run) { r.Status, r.Presented = pipeline.StatusCompleted, true }

// registered reports whether queue is in {p}queues.
func registered(t *testing.T, rdb *redis.Client, queue string) bool {
	t.Helper()
	ok, err := rdb.SIsMember(context.Background(), "rb:queues", queue).Result()
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestATerminalsQueueIsForgottenByItsLastRunsFinalSave: a process's
// private queue is forgotten by the save that records its one run
// finished and shown (not by the save of the run finished but not yet
// shown, which still has work), with one SREM; nothing of the queue is
// left, and the next process's claim pass sends only its SMEMBERS, where
// it had to forget the queue itself (seven commands).
func TestATerminalsQueueIsForgottenByItsLastRunsFinalSave(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	_, s, rdb := privateProcess(t, srv.URL, "terminal-a")
	createIn(t, s, "terminal-a", "r-1")
	saveAs(t, s, "r-1", func(r *pipeline.Run) { r.Step = pipeline.StepSearch })
	saveAs(t, s, "r-1", func(r *pipeline.Run) { r.Status = pipeline.StatusCompleted })
	if !registered(t, rdb, "terminal-a") {
		t.Fatal("the queue was forgotten while its run still had its outcome to show")
	}
	srem := callsOf(t, rdb, "srem")
	saveAs(t, s, "r-1", shown)
	if registered(t, rdb, "terminal-a") {
		t.Fatal("the queue is still in rb:queues after its last run's final save")
	}
	if n := callsOf(t, rdb, "srem") - srem; n != 1 {
		t.Errorf("the final save ran %d SREMs, want 1", n)
	}
	if left := queueKeys(t, rdb, "terminal-a"); len(left) != 0 {
		t.Errorf("keys of the forgotten queue left: %v", left)
	}

	// The next process's first pass.
	next := otherProcess(t, srv.Addr)
	if err := next.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	cmds := &namedCommands{}
	next.AddHook(cmds)
	gone := &interrupter{}
	w := NewWorker(next, &advancer{}, WorkerOptions{Lease: 15 * time.Second, Clock: readClock(func() time.Time { return t0.Add(time.Hour) }),
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: gone})
	t.Cleanup(w.Stop)
	if _, err := w.PassOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cmds.snapshot(); !slices.Equal(got, []string{"smembers rb:queues"}) {
		t.Errorf("the next process's claim pass sent %v, want only SMEMBERS", got)
	}
}

// TestAPrivateQueueWithARunLeftInItIsKept: while another run of the queue
// is not finished and shown — one with work, one waiting for a deadline,
// one interrupted (no work, no deadline: its indexes say nothing of it) —
// a run's final save keeps the queue, and another process's claim pass
// still rescues the run with work once it is abandoned. The last one's
// final save forgets the queue.
func TestAPrivateQueueWithARunLeftInItIsKept(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	_, s, rdb := privateProcess(t, srv.URL, "terminal-a")
	for _, id := range []string{"r-done", "r-work", "r-timer", "r-stopped"} {
		createIn(t, s, "terminal-a", id)
	}
	saveAs(t, s, "r-timer", func(r *pipeline.Run) {
		def := checkpoints.Builtins(t0)[0]
		def.Timeout = time.Hour
		inst := checkpoints.NewInstance(def, r.ID+".x", r.ID, nil, nil, nil, t0)
		_ = inst.Offer(t0, "engine")
		r.Checkpoints, r.Waiting, r.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	})
	saveAs(t, s, "r-stopped", func(r *pipeline.Run) { r.Status = pipeline.StatusInterrupted })

	saveAs(t, s, "r-done", shown)
	if !registered(t, rdb, "terminal-a") {
		t.Fatal("the queue was forgotten with three runs left in it")
	}
	gone := &interrupter{}
	other := NewWorker(otherProcess(t, srv.Addr), &advancer{}, WorkerOptions{Lease: 15 * time.Second,
		Clock:     readClock(func() time.Time { return t0.Add(5 * 15 * time.Second) }),
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: gone})
	t.Cleanup(other.Stop)
	if _, err := other.PassOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gone.ids, []string{"r-work"}) {
		t.Fatalf("another process's pass marked %v interrupted, want the abandoned run with work, r-work", gone.ids)
	}

	for _, id := range []string{"r-work", "r-timer"} {
		saveAs(t, s, id, shown)
		if !registered(t, rdb, "terminal-a") {
			t.Fatalf("the queue was forgotten by %s's final save while r-stopped is left", id)
		}
	}
	saveAs(t, s, "r-stopped", shown)
	if registered(t, rdb, "terminal-a") {
		t.Fatal("the queue is still in rb:queues after its last run's final save")
	}
	if left := queueKeys(t, rdb, "terminal-a"); len(left) != 0 {
		t.Errorf("keys of the forgotten queue left: %v", left)
	}
}

// TestARunCreatedAfterItsQueueWasForgottenIsStillFound: a run created in
// a private queue after its last run forgot it (researchbot eval runs one
// question after another) registers the queue again: another process's
// pass rescues it once it is abandoned, and a worker serving the queue
// takes it over. Its own final save forgets the queue again.
func TestARunCreatedAfterItsQueueWasForgottenIsStillFound(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	_, s, rdb := privateProcess(t, srv.URL, "terminal-a")
	createIn(t, s, "terminal-a", "r-1")
	saveAs(t, s, "r-1", shown)
	if registered(t, rdb, "terminal-a") {
		t.Fatal("the queue is still in rb:queues after its run's final save")
	}
	createIn(t, s, "terminal-a", "r-2")
	if !registered(t, rdb, "terminal-a") {
		t.Fatal("a run created after the queue was forgotten did not register it again")
	}
	now := t0.Add(5 * 15 * time.Second)
	gone := &interrupter{}
	rescuer := NewWorker(otherProcess(t, srv.Addr), &advancer{}, WorkerOptions{Lease: 15 * time.Second,
		Clock:     readClock(func() time.Time { return now }),
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: gone})
	t.Cleanup(rescuer.Stop)
	if _, err := rescuer.PassOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gone.ids, []string{"r-2"}) {
		t.Fatalf("another process's pass marked %v interrupted, want r-2", gone.ids)
	}
	adv := &advancer{called: make(chan advanceCall, 1)}
	taker := NewWorker(otherProcess(t, srv.Addr), adv, WorkerOptions{Queues: []string{"terminal-a"},
		Lease: 15 * time.Second, Clock: readClock(func() time.Time { return now })})
	t.Cleanup(taker.Stop)
	if n, err := taker.PassOnce(ctx); err != nil || n != 1 {
		t.Fatalf("a worker of the queue took %d runs (%v), want r-2", n, err)
	}
	if c := next(t, adv); c.run != "r-2" {
		t.Fatalf("took %s, want r-2", c.run)
	}
	saveAs(t, s, "r-2", shown)
	if registered(t, rdb, "terminal-a") {
		t.Fatal("the queue is still in rb:queues after its second run's final save")
	}
}

// TestARefusedFinalSaveForgetsNothing: the final save of a queue's last
// run that is refused — a stale version, a fence that moved — forgets
// nothing, and the process still knows the run is left: the save that
// holds forgets the queue.
func TestARefusedFinalSaveForgetsNothing(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	db, s, rdb := privateProcess(t, srv.URL, "terminal-a")
	createIn(t, s, "terminal-a", "r-1")
	l := db.Locker(time.Minute)
	lctx, lease, err := l.Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	stale, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	saveAs(t, s, "r-1", func(r *pipeline.Run) { r.Fence, r.Step = lease.Fence(), pipeline.StepSearch })
	stale.Fence = lease.Fence()
	shown(stale)
	if err := s.Save(lctx, stale); !errors.Is(err, pipeline.ErrConflict) {
		t.Fatalf("a final save of a stale copy = %v, want ErrConflict", err)
	}
	if !registered(t, rdb, "terminal-a") {
		t.Fatal("a refused final save (stale version) forgot the queue")
	}
	fenced, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	fenced.Fence = lease.Fence() + 1
	shown(fenced)
	if err := s.Save(lctx, fenced); !errors.Is(err, pipeline.ErrLeaseLost) {
		t.Fatalf("a final save with another fence = %v, want ErrLeaseLost", err)
	}
	if !registered(t, rdb, "terminal-a") {
		t.Fatal("a refused final save (fence moved) forgot the queue")
	}
	saveAs(t, s, "r-1", func(r *pipeline.Run) { r.Fence = lease.Fence(); shown(r) })
	if registered(t, rdb, "terminal-a") {
		t.Fatal("the final save that held did not forget the queue")
	}
}

// TestOnlyAPrivateQueueIsForgottenByASave: the final save of a run of a
// shared queue ("runs", served by a worker that is not a NewQueues one),
// or of a private queue of another process (a run resumed here), forgets
// nothing.
func TestOnlyAPrivateQueueIsForgottenByASave(t *testing.T) {
	srv, _ := redistest.Start(t)
	db, s, rdb := privateProcess(t, srv.URL, "terminal-a")
	db.Worker(&advancer{}, WorkerOptions{Queues: []string{"runs"}})
	for _, q := range []string{"runs", "terminal-elsewhere"} {
		createIn(t, s, q, "r-"+q)
		saveAs(t, s, "r-"+q, shown)
		if !registered(t, rdb, q) {
			t.Errorf("the final save of a run of %s forgot the queue", q)
		}
	}
	resumed := NewStore(rdb, "") // the run was created by another process
	createIn(t, resumed, "terminal-a", "r-resumed")
	saveAs(t, s, "r-resumed", shown)
	if !registered(t, rdb, "terminal-a") {
		t.Error("the final save of a run this process did not create forgot its queue")
	}
}

// TestACreateBesideTheLastFinalSaveKeepsTheQueue: a run created in the
// queue while the final save of its last run is on its way (eval starts
// its next question as the previous report is shown) leaves the queue
// registered, whichever reaches Redis first: the create waits for a
// forgetting save, and registers the queue again after it.
func TestACreateBesideTheLastFinalSaveKeepsTheQueue(t *testing.T) {
	srv, _ := redistest.Start(t)
	for i := range 40 {
		queue := fmt.Sprintf("terminal-%02d", i)
		_, s, rdb := privateProcess(t, srv.URL, queue)
		createIn(t, s, queue, queue+"-first")
		r, err := s.Load(context.Background(), queue+"-first")
		if err != nil {
			t.Fatal(err)
		}
		shown(r)
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := s.Save(context.Background(), r); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			nr := newRun(queue+"-next", "terminal", t0)
			nr.Origin = pipeline.Origin{Kind: "terminal", Queue: queue}
			nr.Status = pipeline.StatusRunning
			if err := s.Create(context.Background(), nr); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if !registered(t, rdb, queue) {
			t.Fatalf("%s: a run was created beside the final save of the one before, and the queue is forgotten", queue)
		}
	}
}

// TestAForgettingSaveHoldsOffCreatesUntilItIsAnswered: while the save
// that forgets a private queue is on its way to Redis, no create in that
// queue can be sent (it would be registered by its script and then
// forgotten by the save); the other saves hold nothing.
func TestAForgettingSaveHoldsOffCreatesUntilItIsAnswered(t *testing.T) {
	srv, _ := redistest.Start(t)
	db, s, rdb := privateProcess(t, srv.URL, "terminal-a")
	createIn(t, s, "terminal-a", "r-1")
	pq := db.private.lookup("terminal-a")
	var mu sync.Mutex
	var held []bool // for each save sent: was the queue's entry held
	rdb.AddHook(onCommand(func(cmd redis.Cmder) {
		if name := cmd.Name(); name != "evalsha" && name != "eval" {
			return
		}
		free := pq.mu.TryLock()
		if free {
			pq.mu.Unlock()
		}
		mu.Lock()
		held = append(held, !free)
		mu.Unlock()
	}))
	saveAs(t, s, "r-1", func(r *pipeline.Run) { r.Step = pipeline.StepSearch })
	saveAs(t, s, "r-1", shown)
	if registered(t, rdb, "terminal-a") {
		t.Fatal("the final save did not forget the queue")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(held, []bool{false, true}) {
		t.Errorf("creates in the queue were held off during the saves: %v, want during the forgetting one only", held)
	}
	if !pq.mu.TryLock() {
		t.Fatal("the queue's entry is still held after the forgetting save was answered")
	}
	pq.mu.Unlock()
}

// onCommand is a hook that calls f with each command before it is sent.
type onCommand func(redis.Cmder)

func (f onCommand) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f onCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		f(cmd)
		return next(ctx, cmd)
	}
}

func (f onCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			f(cmd)
		}
		return next(ctx, cmds)
	}
}

// callsOf is how many times the server ran the command name (INFO
// commandstats; scripts' commands included).
func callsOf(t *testing.T, rdb *redis.Client, name string) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+name+":calls="); ok {
			var n int
			_, _ = fmt.Sscanf(rest, "%d", &n)
			return n
		}
	}
	return 0
}
