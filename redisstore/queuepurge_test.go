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

// queueKeys lists the keys the store keeps for queues whose name starts
// with prefix (besides the runs themselves).
func queueKeys(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	var keys []string
	for _, pattern := range []string{"rb:work:" + prefix + "*", "rb:timers:" + prefix + "*", "asynq:{" + prefix + "*"} {
		ks, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ks...)
	}
	names, err := rdb.SMembers(ctx, "rb:queues").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			keys = append(keys, "rb:queues ∋ "+n)
		}
	}
	return keys
}

// TestAbandonedTerminalQueuesLeaveNoKeys: 30 terminal runs whose processes
// were killed in the middle of a step (some just claimed by a pass) are
// marked interrupted, and then every key of their queues is deleted. A
// terminal process still waiting for a person keeps its deadline.
func TestAbandonedTerminalQueuesLeaveNoKeys(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
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
		if i%2 == 0 {
			if ok, err := rdb.SetNX(ctx, claimKey(DefaultPrefix, r.ID), "1", time.Minute).Result(); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
	}
	if got := len(queueKeys(t, rdb, "terminal-dead")); got < 2*n {
		t.Fatalf("the setup left %d keys, want at least %d", got, 2*n)
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

	now := t0.Add(61 * time.Second) // four leases without a worker
	w := NewWorker(rdb, &advancer{}, WorkerOptions{Queues: []string{"runs"}, Lease: 15 * time.Second, Clock: readClock(func() time.Time { return now }),
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: storeInterrupter{s}})
	t.Cleanup(w.Stop)
	for range 2 { // the first pass marks the runs interrupted, the next deletes their queues
		if _, err := w.PassOnce(ctx); err != nil {
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
	if left := queueKeys(t, rdb, "terminal-live"); len(left) != 2 {
		t.Errorf("the live terminal run's queue: %v, want its deadline and its name kept", left)
	}
}

// TestAPrivateWorkerLeavesNoKeys: a terminal run's worker whose run needed
// a retry and a checkpoint timer leaves no key of its queue when it stops:
// both were kept in the process (and the retry's claim expires).
func TestAPrivateWorkerLeavesNoKeys(t *testing.T) {
	_, rdb := redistest.Start(t)
	q := newQueue(t, rdb)
	ctx := context.Background()
	adv := &advancer{answer: func(n int) error {
		if n == 1 {
			return errors.New("redis hiccup")
		}
		return nil
	}}
	w := NewWorker(rdb, adv, WorkerOptions{Queues: []string{"terminal-x"}, NewQueues: true,
		RetryDelay: func(int, error) time.Duration { return time.Millisecond }})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	q.RunLocally(w)
	if err := q.WakeAt(ctx, "terminal-x", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := q.Wake(ctx, "terminal-x", "r-1"); err != nil {
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

// TestTheFirstPassSkipsNewQueuesOnly: a worker of a queue made just now
// does not look in it on its first pass (nothing there can be half a lease
// old), and does on the passes after: a run of that queue whose worker
// died is still taken.
func TestTheFirstPassSkipsNewQueuesOnly(t *testing.T) {
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
	adv := &advancer{called: make(chan advanceCall, 1)}
	startWorker(t, watched, adv, WorkerOptions{Queues: []string{"terminal-new"}, Lease: 400 * time.Millisecond, NewQueues: true,
		Abandoned: func(q string) bool { return strings.HasPrefix(q, "terminal-") }, Interrupter: storeInterrupter{s},
		Clock: readClock(func() time.Time { return t0.Add(time.Minute) })})
	// The first pass ends with its look at abandoned queues.
	waitFor(t, "the first pass", func() bool { return cmds.count("smembers") >= 1 })
	if n := cmds.count("eval"); n != 0 && cmds.count("smembers") == 1 {
		t.Errorf("the first pass looked in the new queue (%d scripts)", n)
	}
	if c := next(t, adv); c.run != "r-1" {
		t.Fatalf("took %s", c.run)
	}
}

// snapshot is every command sent so far.
func (c *namedCommands) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...)
}
