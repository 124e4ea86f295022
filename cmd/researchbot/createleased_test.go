package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestATerminalKilledInItsFirstStepIsTakenOver: a terminal run is created
// with its lease taken for the process's own worker, which adopts it and
// keeps it while the plan is made. The process is killed with SIGKILL in
// that first step: its lease (the create's, fence 1) expires, and a worker
// process serving the run's queue takes the run over within 2×RUN_LEASE,
// under a higher fence, makes the plan again on its own counted attempt
// and finishes the run.
func TestATerminalKilledInItsFirstStepIsTakenOver(t *testing.T) {
	res := &researchtest.Researcher{DelayFor: func(schema string, n int) time.Duration {
		if schema == "research_plan" && n == 1 {
			return 20 * time.Second
		}
		return 0
	}}
	w := newWorld(t, res)
	c := w.start(t, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	runID := c.waitFor(t, startedRe)[1]
	_, rdb := redistest.Connect(t, w.redisURL)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	ctx := context.Background()
	r, err := store.Load(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	wk := w.start(t, "worker", "--queues", r.Origin.Queue)
	wk.waitFor(t, regexp.MustCompile(`researchbot worker taking runs`))
	for deadline := time.Now().Add(60 * time.Second); res.Count("research_plan") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the plan was never asked for; stderr:\n%s", c.log())
		}
	}
	if f := rdb.HGet(ctx, "rb:run:"+runID, "fence").Val(); f != "1" {
		t.Fatalf("the run's fence while its first step runs is %q, want 1 (the create's lease, adopted)", f)
	}
	c.kill(t)
	killed := time.Now()
	for res.Count("research_plan") < 2 {
		if time.Since(killed) > 30*time.Second {
			t.Fatal("the run was not taken over")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(killed); took > 4*time.Second {
		t.Errorf("takeover took %v, want at most 2×RUN_LEASE (4s)", took)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r, err = store.Load(ctx, runID); err != nil {
			t.Fatal(err)
		}
		if r.Status.Final() || time.Now().After(deadline) {
			break
		}
	}
	if r.Status != pipeline.StatusCompleted || r.Report == nil {
		t.Fatalf("the run taken over ended %s at %s", r.Status, r.Step)
	}
	if f := rdb.HGet(ctx, "rb:run:"+runID, "fence").Val(); f != "2" {
		t.Errorf("the run taken over has fence %q, want 2", f)
	}
}
