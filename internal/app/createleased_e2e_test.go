package app

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
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

// TestARunCreatedToBeRunHereSendsNoLeaseTake: a run created on a queue
// only this process serves (a terminal run's private queue) is created
// with its lease taken for this process's worker, which adopts it: the run
// goes from its creation to its end with no lease take sent at all, under
// the one holding the create made (the fence stays 1), and ends as any
// run does. A run of a shared queue, which any replica's worker may take,
// is created without a lease and its worker takes it.
func TestARunCreatedToBeRunHereSendsNoLeaseTake(t *testing.T) {
	ctx := context.Background()
	srv, rdb := redistest.Start(t)
	res := &researchtest.Researcher{}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	model := llmtest.NewServer(t, res.Respond)
	run := func(queue string, private bool) (*pipeline.Run, int) {
		t.Helper()
		rec := newRecorder()
		a := startApp(t, testConfig(t, srv.URL, model.URL(), web.URL(), nil), Options{
			Presenters: map[string]pipeline.Presenter{"test": rec}, DefaultQueue: queue,
			NewPrivateQueue: private, Clock: &researchtest.Clock{},
		})
		takes := &leaseTakes{takes: map[string]int{}}
		a.Conn.Client.AddHook(takes)
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
		return r, takes.of(r.ID)
	}

	here, takes := run("terminal-x", true)
	if takes != 0 {
		t.Errorf("a run created to be run here sent %d lease takes, want 0 (its create took the lease)", takes)
	}
	if f := rdb.HGet(ctx, "rb:run:"+here.ID, "fence").Val(); f != "1" {
		t.Errorf("the run created to be run here has fence %q, want 1 (one holding, the create's)", f)
	}

	shared, takes := run("shared", false)
	if takes == 0 {
		t.Error("a run of a shared queue sent no lease take: its create must not take the lease")
	}
	if f := rdb.HGet(ctx, "rb:run:"+shared.ID, "fence").Val(); f != "1" {
		t.Errorf("the shared queue's run has fence %q, want 1 (its worker's one take)", f)
	}
}
