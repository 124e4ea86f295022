package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// leaseTakes counts the lease takes a client sends: scripts run with two
// keys, a run's lease key first (the take's: lease, run). The lease's
// refresh and release name the lease key alone.
type leaseTakes struct {
	mu    sync.Mutex
	takes map[string]int // by lease key
}

func (c *leaseTakes) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *leaseTakes) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); (cmd.Name() == "evalsha" || cmd.Name() == "eval") && len(args) >= 4 && fmt.Sprint(args[2]) == "2" {
			c.mu.Lock()
			c.takes[fmt.Sprint(args[3])]++
			c.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (c *leaseTakes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (c *leaseTakes) of(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.takes["rb:lock:run:"+runID]
}

// planTime is how the stored run stood when the model was asked for its plan.
type planTime struct {
	version int64
	status  pipeline.Status
	attempt int
}

// storedRun reads how run id stands in rdb: its version, status and attempt.
func storedRun(ctx context.Context, rdb *redis.Client, id string) (planTime, error) {
	vals, err := rdb.HMGet(ctx, "rb:run:"+id, "v", "data").Result()
	if err != nil {
		return planTime{}, err
	}
	var r pipeline.Run
	v, _ := strconv.ParseInt(fmt.Sprint(vals[0]), 10, 64)
	if err := json.Unmarshal([]byte(fmt.Sprint(vals[1])), &r); err != nil {
		return planTime{}, err
	}
	return planTime{version: v, status: r.Status, attempt: r.Attempt.N}, nil
}

// TestARunCreatedToBeRunHereSendsNoLeaseTake: a run created on a queue
// only this process serves (a terminal run's private queue) is created
// with its lease taken for this process's worker, which adopts it: the run
// goes from its creation to its end with no lease take sent at all, under
// the one holding the create made (the fence stays 1), and ends as any
// run does. Its create also counted the attempt at the plan: when the
// model is asked for the plan the stored run is still the one created
// (version 1), running, its first attempt counted. A run of a shared
// queue, which any replica's worker may take, is created without a lease
// and its worker takes it, and saves the attempt before the plan.
func TestARunCreatedToBeRunHereSendsNoLeaseTake(t *testing.T) {
	ctx := context.Background()
	var current atomic.Pointer[redis.Client] // the Redis of the run going on
	var mu sync.Mutex
	var atPlan []planTime
	res := &researchtest.Researcher{DelayFor: func(schema string, _ int) time.Duration {
		if schema != "research_plan" {
			return 0
		}
		rdb := current.Load()
		ids := rdb.ZRange(ctx, "rb:runs:active", 0, -1).Val()
		if len(ids) != 1 {
			t.Errorf("%d active runs when the plan was asked for, want 1", len(ids))
			return 0
		}
		pt, err := storedRun(ctx, rdb, ids[0])
		if err != nil {
			t.Errorf("the run when the plan was asked for: %v", err)
		}
		mu.Lock()
		atPlan = append(atPlan, pt)
		mu.Unlock()
		return 0
	}}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	model := llmtest.NewServer(t, res.Respond)
	run := func(queue string, private bool) (fence string, takes int, plan planTime) {
		t.Helper()
		srv, rdb := redistest.Start(t)
		current.Store(rdb)
		rec := newRecorder()
		a := startApp(t, testConfig(t, srv.URL, model.URL(), web.URL(), nil), Options{
			Presenters: map[string]pipeline.Presenter{"test": rec}, DefaultQueue: queue,
			NewPrivateQueue: private, Clock: &researchtest.Clock{},
		})
		lt := &leaseTakes{takes: map[string]int{}}
		a.Conn.Client.AddHook(lt)
		r, err := a.Engine.Start(ctx, pipeline.Request{
			Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
			Origin: pipeline.Origin{Kind: "test", Queue: queue},
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case done := <-rec.done:
			if done.Status != pipeline.StatusCompleted || done.Report == nil {
				t.Fatalf("the run on %s ended %s (%s)", queue, done.Status, done.Failure)
			}
		case <-time.After(waitLimit):
			t.Fatalf("the run on %s did not finish", queue)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(atPlan) != 1 {
			t.Fatalf("the plan was asked for %d times, want 1", len(atPlan))
		}
		plan, atPlan = atPlan[0], nil
		return rdb.HGet(ctx, "rb:run:"+r.ID, "fence").Val(), lt.of(r.ID), plan
	}

	fence, takes, plan := run("terminal-x", true)
	if takes != 0 {
		t.Errorf("a run created to be run here sent %d lease takes, want 0 (its create took the lease)", takes)
	}
	if fence != "1" {
		t.Errorf("the run created to be run here has fence %q, want 1 (one holding, the create's)", fence)
	}
	if want := (planTime{version: 1, status: pipeline.StatusRunning, attempt: 1}); plan != want {
		t.Errorf("when the plan was asked for, the run created to be run here stood at %+v, want %+v (the attempt counted by the create, no save before the step)", plan, want)
	}

	fence, takes, plan = run("shared", false)
	if takes == 0 {
		t.Error("a run of a shared queue sent no lease take: its create must not take the lease")
	}
	if fence != "1" {
		t.Errorf("the shared queue's run has fence %q, want 1 (its worker's one take)", fence)
	}
	if want := (planTime{version: 2, status: pipeline.StatusRunning, attempt: 1}); plan != want {
		t.Errorf("when the plan was asked for, the shared queue's run stood at %+v, want %+v (its worker's attempt save)", plan, want)
	}
}

// idleAdvancer is the worker of a process that dies before it advances
// anything: it takes the runs it is handed and does nothing with them.
type idleAdvancer struct{ runs chan string }

func (a idleAdvancer) Advance(_ context.Context, runID string) error {
	a.runs <- runID
	return nil
}

func (idleAdvancer) Fail(context.Context, string, error) error { return nil }

// TestARunWhoseCreatorDiedBeforeItsWorkerTookItIsRecovered: a process
// creates a run on its private queue (created leased, the plan's attempt
// counted) and dies before its worker advanced it. Its lease expires with
// its TTL; another process's worker serving that queue finds the run in
// the claim passes, takes the lease anew (fence 2), counts its own attempt
// at the plan after the dead creator's — an attempt handed to a worker
// that died, as any worker's death mid-step leaves one — and finishes the
// run.
func TestARunWhoseCreatorDiedBeforeItsWorkerTookItIsRecovered(t *testing.T) {
	ctx := context.Background()
	srv, rdb := redistest.Start(t)
	var mu sync.Mutex
	var atPlan []planTime
	res := &researchtest.Researcher{DelayFor: func(schema string, _ int) time.Duration {
		if schema == "research_plan" {
			ids := rdb.ZRange(ctx, "rb:runs:active", 0, -1).Val()
			if len(ids) == 1 {
				pt, err := storedRun(ctx, rdb, ids[0])
				if err != nil {
					t.Errorf("the run when the plan was asked for: %v", err)
				}
				mu.Lock()
				atPlan = append(atPlan, pt)
				mu.Unlock()
			}
		}
		return 0
	}}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	model := llmtest.NewServer(t, res.Respond)
	cfg := testConfig(t, srv.URL, model.URL(), web.URL(), map[string]string{"RUN_LEASE": "1s"})

	// The creator: its worker serves the private queue and never advances.
	dead, err := New(ctx, cfg, Options{Presenters: map[string]pipeline.Presenter{"test": newRecorder()}, DefaultQueue: "terminal-x"})
	if err != nil {
		t.Fatal(err)
	}
	idle := idleAdvancer{runs: make(chan string, 1)}
	w := dead.DB.Worker(idle, redisstore.WorkerOptions{Queues: []string{"terminal-x"}, NewQueues: true, Lease: cfg.LeaseTTL})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	dead.Queue.RunLocally(w)
	r, err := dead.Engine.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "terminal-x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-idle.runs // handed to the creator's worker, which dies with its process
	w.Stop()
	_ = dead.Close()
	if pttl := rdb.PTTL(ctx, "rb:lock:run:"+r.ID).Val(); pttl <= 0 {
		t.Fatalf("the dead creator's run has no lease (PTTL %v): it was not created leased", pttl)
	}

	// Another process serving the queue recovers the run.
	rec := newRecorder()
	startApp(t, cfg, Options{Presenters: map[string]pipeline.Presenter{"test": rec}, DefaultQueue: "terminal-x", Clock: &researchtest.Clock{}})
	select {
	case done := <-rec.done:
		if done.Status != pipeline.StatusCompleted || done.Report == nil {
			t.Fatalf("the recovered run ended %s (%s)", done.Status, done.Failure)
		}
	case <-time.After(waitLimit):
		t.Fatal("the dead creator's run was not recovered")
	}
	if f := rdb.HGet(ctx, "rb:run:"+r.ID, "fence").Val(); f != "2" {
		t.Errorf("the recovered run's fence is %q, want 2 (the creator's lease, then the recoverer's)", f)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []planTime{{version: 2, status: pipeline.StatusRunning, attempt: 2}}; fmt.Sprint(atPlan) != fmt.Sprint(want) {
		t.Errorf("when the plan was asked for, the recovered run stood at %+v, want %+v (the dead creator's attempt, then the recoverer's)", atPlan, want)
	}
}
