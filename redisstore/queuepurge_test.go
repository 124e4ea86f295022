package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// storeInterrupter marks runs interrupted in the store, as the engine does.
type storeInterrupter struct{ s *Store }

func (i storeInterrupter) Interrupt(ctx context.Context, id string) error {
	r, err := i.s.Load(ctx, id)
	if err != nil {
		return err
	}
	r.Status = pipeline.StatusInterrupted
	return i.s.Save(ctx, r)
}

// queueKeys lists the keys asynq and the store keep for queues whose name
// starts with prefix (besides the runs themselves).
func queueKeys(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for _, pattern := range []string{"asynq:{" + prefix + "*", "rb:work:" + prefix + "*", "rb:timers:" + prefix + "*"} {
		ks, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ks...)
	}
	for _, set := range []string{"asynq:queues", "rb:queues"} {
		names, err := rdb.SMembers(ctx, set).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				keys = append(keys, set+" ∋ "+n)
			}
		}
	}
	return keys
}

// TestAbandonedTerminalQueuesLeaveNoKeys: 30 terminal runs whose processes
// were killed — in the middle of a step (their task active in asynq), with a
// checkpoint timer queued, or with their task archived after failing — are
// marked interrupted, and then every key of their queues is deleted. A
// terminal process still waiting for a person keeps its timer.
func TestAbandonedTerminalQueuesLeaveNoKeys(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	q := newQueue(t, rdb)
	ctx := context.Background()
	const n = 30
	for i := range n {
		queue := fmt.Sprintf("terminal-dead%02d", i)
		r := newRun(fmt.Sprintf("r-dead%02d", i), "terminal", t0)
		r.Origin = pipeline.Origin{Kind: "terminal", Queue: queue}
		r.Status = pipeline.StatusRunning
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, queue, r.ID, 1); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0: // killed mid-step: the task is active, under asynq's lease
			id := advanceTaskID(r.ID, 1)
			if err := rdb.LMove(ctx, "asynq:{"+queue+"}:pending", "asynq:{"+queue+"}:active", "RIGHT", "LEFT").Err(); err != nil {
				t.Fatal(err)
			}
			if err := rdb.ZAdd(ctx, "asynq:{"+queue+"}:lease", redis.Z{Score: float64(t0.Unix() + 30), Member: id}).Err(); err != nil {
				t.Fatal(err)
			}
		case 1: // killed at a checkpoint with a timeout
			if err := q.EnqueueTimer(ctx, queue, r.ID, r.ID+".cp", t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		case 2: // its task failed for good
			if err := q.inspector.ArchiveTask(queue, advanceTaskID(r.ID, 1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := len(queueKeys(t, rdb, "terminal-dead")); got < 3*n {
		t.Fatalf("the setup left %d keys, want at least %d", got, 3*n)
	}

	// A terminal process that is alive, waiting for a person until t0+2h.
	live := newRun("r-live", "terminal", t0)
	live.Origin = pipeline.Origin{Kind: "terminal", Queue: "terminal-live"}
	if err := s.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	live, _ = s.Load(ctx, "r-live")
	def := checkpoints.Builtins(t0)[0]
	def.Timeout = 2 * time.Hour
	inst := checkpoints.NewInstance(def, "r-live.x", "r-live", nil, nil, nil, t0)
	_ = inst.Offer(t0, "engine")
	live.Checkpoints, live.Waiting, live.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	if err := s.Save(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := q.EnqueueTimer(ctx, "terminal-live", live.ID, inst.ID, inst.DeadlineAt); err != nil {
		t.Fatal(err)
	}

	l := NewLocker(rdb, "", 15*time.Second)
	now := t0.Add(61 * time.Second) // four leases without a worker
	rs := &Rescuer{Store: s, Locker: l, Queue: q, Queues: []string{"runs"}, Clock: readClock(func() time.Time { return now }),
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: storeInterrupter{s}}
	for range 2 { // the first pass marks the runs interrupted, the next deletes their queues
		if _, err := rs.RescueOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if r, err := s.Load(ctx, fmt.Sprintf("r-dead%02d", i)); err != nil || r.Status != pipeline.StatusInterrupted {
			t.Fatalf("run %d: %v, %v; want interrupted", i, r.Status, err)
		}
	}
	if left := queueKeys(t, rdb, "terminal-dead"); len(left) != 0 {
		t.Errorf("%d keys left by %d killed terminal runs, want 0: %v", len(left), n, left)
	}
	if tasks, err := rdb.Keys(ctx, "asynq:{terminal-live}:t:*").Result(); err != nil || len(tasks) != 1 {
		t.Errorf("the live terminal run's timer task: %v (%v), want it kept", tasks, err)
	}
}

// TestPrivateWorkerLeavesNoKeys: a terminal run's worker that served its
// queue (a retry, a checkpoint timer) deletes the queue's keys when it stops.
func TestPrivateWorkerLeavesNoKeys(t *testing.T) {
	_, rdb := redistest.Start(t)
	q := newQueue(t, rdb)
	ctx := context.Background()
	adv := &advancer{answer: func(n int) error {
		if n == 1 {
			return errors.New("redis hiccup")
		}
		return nil
	}}
	w := NewWorker(rdb, adv, WorkerOptions{Queues: map[string]int{"terminal-x": 1}, Private: true, PollInterval: 20 * time.Millisecond,
		RetryDelay: func(int, error) time.Duration { return 0 }})
	q.RunLocally(w)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	if err := q.EnqueueTimer(ctx, "terminal-x", "r-1", "r-1.cp", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := q.Enqueue(ctx, "terminal-x", "r-1", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the retried advance", func() bool { return adv.calls() >= 2 })
	w.Stop()
	if left := queueKeys(t, rdb, "terminal-x"); len(left) != 0 {
		t.Errorf("keys left after the private worker stopped, want 0: %v", left)
	}
}

// namedCommands records the names of the commands a client sends (and the
// first key of each).
type namedCommands struct {
	mu   sync.Mutex
	sent []string
}

func (c *namedCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *namedCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}

func (c *namedCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.add(cmd)
		}
		return next(ctx, cmds)
	}
}

func (c *namedCommands) add(cmd redis.Cmder) {
	name := cmd.Name()
	if args := cmd.Args(); len(args) > 1 {
		name += fmt.Sprint(" ", args[1])
	}
	c.mu.Lock()
	c.sent = append(c.sent, name)
	c.mu.Unlock()
}

// count is how many commands sent so far start with prefix.
func (c *namedCommands) count(prefix string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.sent {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// TestAnOnDemandPrivateWorkerDeletesItsQueueOnlyIfItQueuedThere: a
// terminal run's worker on its new queue that queued nothing (every
// wake-up taken at once) sends no command to delete the queue when it
// stops; one that queued a retry deletes every key of it.
func TestAnOnDemandPrivateWorkerDeletesItsQueueOnlyIfItQueuedThere(t *testing.T) {
	for _, retry := range []bool{false, true} {
		t.Run(fmt.Sprintf("retry=%v", retry), func(t *testing.T) {
			_, rdb := redistest.Start(t)
			cmds := &namedCommands{}
			rdb.AddHook(cmds)
			q := newQueue(t, rdb)
			ctx := context.Background()
			adv := &advancer{answer: func(n int) error {
				if retry && n == 1 {
					return errors.New("redis hiccup")
				}
				return nil
			}}
			w := NewWorker(rdb, adv, WorkerOptions{Queues: map[string]int{"terminal-x": 1}, Private: true, OnDemand: true,
				PollInterval: 20 * time.Millisecond, RetryDelay: func(int, error) time.Duration { return 0 }})
			q.RunLocally(w)
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			if err := q.Enqueue(ctx, "terminal-x", "r-1", 1); err != nil {
				t.Fatal(err)
			}
			want := 1
			if retry {
				want = 2
			}
			waitFor(t, "the advances", func() bool { return adv.calls() >= want })
			w.Stop()
			scans := cmds.count("scan")
			if !retry && scans != 0 {
				t.Errorf("a worker that queued nothing scanned for its queue's keys %d times, want 0", scans)
			}
			if retry && scans == 0 {
				t.Error("a worker that queued a retry did not delete its queue")
			}
			if left := queueKeys(t, rdb, "terminal-x"); len(left) != 0 {
				t.Errorf("keys left after the private worker stopped, want 0: %v", left)
			}
		})
	}
}

// TestTheRescuersFirstPassSkipsNewQueuesOnly: a rescuer of a queue made
// just now does not look in it on its first pass (nothing there can be
// half a lease old), and does on the passes after: a run of that queue
// whose worker died is still rescued.
func TestTheRescuersFirstPassSkipsNewQueuesOnly(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	r.Origin.Queue = "terminal-new"
	r.Status = pipeline.StatusRunning
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	cmds := &namedCommands{}
	watched := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr})
	t.Cleanup(func() { _ = watched.Close() })
	watched.AddHook(cmds)
	ws := NewStore(watched, "")
	q := newQueue(t, watched)
	rs := &Rescuer{Store: ws, Locker: NewLocker(watched, "", 400*time.Millisecond), Queue: q, Queues: []string{"terminal-new"},
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: storeInterrupter{ws},
		Clock: readClock(func() time.Time { return t0.Add(time.Minute) }), NewQueues: true}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		rs.Run(runCtx)
	}()
	defer func() { cancel(); <-done }()
	// The first pass ends with its look at abandoned queues.
	waitFor(t, "the first pass", func() bool { return cmds.count("smembers") >= 1 })
	if n := cmds.count("zrange"); n != 0 && cmds.count("smembers") == 1 {
		t.Errorf("the first pass looked in the new queue (%d ZRANGEs)", n)
	}
	waitFor(t, "the run's rescue", func() bool {
		pending, err := q.inspector.ListPendingTasks("terminal-new")
		return err == nil && len(pending) == 1
	})
}
