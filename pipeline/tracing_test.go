package pipeline_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// tracer is a pipeline.Tracer that records what the engine asks of it.
type tracer struct {
	mu    sync.Mutex
	runs  int
	steps []string // "<trace context> <run> <step> <attempt> <outcome>"
}

func (tr *tracer) StartRun(_ context.Context, runID string) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.runs++
	return fmt.Sprintf("tc-%d-%s", tr.runs, runID)
}

func (tr *tracer) StartStep(ctx context.Context, tc, runID string, step pipeline.Step, attempt int) (context.Context, func(error)) {
	return ctx, func(err error) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		outcome := "ok"
		if err != nil {
			outcome = "failed"
		}
		tr.steps = append(tr.steps, fmt.Sprintf("%s %s %s %d %s", tc, runID, step, attempt, outcome))
	}
}

func (tr *tracer) StartCheckpoint(ctx context.Context, tc, runID, definitionID string) (context.Context, func(error)) {
	return ctx, func(err error) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		tr.steps = append(tr.steps, fmt.Sprintf("%s %s checkpoint %s", tc, runID, definitionID))
	}
}

func (tr *tracer) recorded() (int, []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.runs, append([]string(nil), tr.steps...)
}

// TestARunKeepsItsTraceContextAndEachStepContinuesIt: the trace context is
// made once, when the run is created, saved with it, and handed to the span
// of every attempt at a step, with the attempt's outcome.
func TestARunKeepsItsTraceContextAndEachStepContinuesIt(t *testing.T) {
	tr := &tracer{}
	e := newEnvWith(t, nil, func(c *pipeline.Config) { c.Tracer = tr })
	ctx := context.Background()
	r, err := e.eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.TraceContext != "tc-1-r-1" || e.load().TraceContext != "tc-1-r-1" {
		t.Fatalf("trace context %q (stored %q), want tc-1-r-1", r.TraceContext, e.load().TraceContext)
	}
	_ = e.eng.Advance(ctx, "r-1") // the model fails: the plan step fails its first attempt
	_ = e.eng.Advance(ctx, "r-1")
	runs, steps := tr.recorded()
	if runs != 1 || len(steps) < 2 || steps[0] != "tc-1-r-1 r-1 plan 1 failed" || steps[1] != "tc-1-r-1 r-1 plan 2 failed" {
		t.Fatalf("%d runs started, steps %q; want one run and the plan's attempts, failed, in its trace", runs, steps)
	}
}

// TestARunFromBeforeTracingGetsATraceAtItsNextStep: a run stored without a
// trace context (created before tracing was turned on) gets one, saved, at
// its next step.
func TestARunFromBeforeTracingGetsATraceAtItsNextStep(t *testing.T) {
	tr := &tracer{}
	e := newEnvWith(t, nil, func(c *pipeline.Config) { c.Tracer = tr })
	inst := e.waitingRun(false)
	ctx := context.Background()
	if err := e.eng.Advance(ctx, "r-1"); err != nil { // offers the checkpoint
		t.Fatal(err)
	}
	if _, err := e.eng.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
		t.Fatal(err)
	}
	if err := e.eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	runs, steps := tr.recorded()
	if runs != 1 || len(steps) != 1 || steps[0] != "tc-1-r-1 r-1 fallback 1 ok" {
		t.Fatalf("%d runs started, steps %q; want the fallback step in a new trace", runs, steps)
	}
	if got := e.load().TraceContext; got != "tc-1-r-1" {
		t.Fatalf("stored trace context %q", got)
	}
}
