package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/pipeline"
)

// memoryTracing is a Tracing whose spans are kept in memory.
func memoryTracing(t *testing.T) (*tracing.Tracing, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tracing.New(tp), exp
}

// TestADecisionInServeJoinsItsRunsTrace: a person's decision, handled by
// serve's bot outside any run's span, is a span of the run's trace (begun
// by another process), through the real engine and Redis; a refused second
// decision is one too, with its refusal as the status. With tracing off
// the bot gets the engine itself.
func TestADecisionInServeJoinsItsRunsTrace(t *testing.T) {
	srv, _ := redistest.Start(t)
	ctx := context.Background()
	cfg, err := config.Load(func(k string) string { return map[string]string{"REDIS_URL": srv.URL}[k] })
	if err != nil {
		t.Fatal(err)
	}
	serveSpans, serveExp := memoryTracing(t)
	a, err := app.New(ctx, cfg, app.Options{Tracing: serveSpans})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if withTracedDecisions(a.Engine, nil) != any(a.Engine) {
		t.Error("with tracing off the bot's engine is wrapped")
	}

	worker, workerExp := memoryTracing(t)
	now := time.Now().UTC().Truncate(time.Second)
	def := checkpoints.Builtins(now)[0]
	inst := checkpoints.NewInstance(def, "r-t1.cp", "r-t1", nil, def.Fields, nil, now)
	if err := inst.Offer(now, "engine"); err != nil {
		t.Fatal(err)
	}
	run := &pipeline.Run{ID: "r-t1", Question: "How well do heat pumps work?", Mode: checkpoints.ModeGuided, Origin: pipeline.Origin{Kind: "slack", Queue: "runs"},
		Status: pipeline.StatusWaiting, Step: pipeline.StepPlan, Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID, CreatedAt: now, UpdatedAt: now,
		TraceContext: worker.Runs().StartRun(ctx, "r-t1")}
	if err := a.Store.Create(ctx, run); err != nil {
		t.Fatal(err)
	}

	eng := withTracedDecisions(a.Engine, serveSpans)
	if _, err := eng.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Reject, By: "U1", Note: "too broad"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Reject, By: "U2", Note: "late"}); !errors.Is(err, checkpoints.ErrAlreadyDecided) {
		t.Fatalf("second decision: %v, want already decided", err)
	}

	root := workerExp.GetSpans()[0]
	var decisions tracetest.SpanStubs
	for _, s := range serveExp.GetSpans() {
		if s.Name == "decision "+def.ID {
			decisions = append(decisions, s)
		}
	}
	if len(decisions) != 2 {
		t.Fatalf("%d decision spans in serve, want 2: %v", len(decisions), serveExp.GetSpans())
	}
	for i, d := range decisions {
		if d.SpanContext.TraceID() != root.SpanContext.TraceID() || d.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("decision %d is in trace %s under %s, not the run's trace %s under %s", i, d.SpanContext.TraceID(), d.Parent.SpanID(), root.SpanContext.TraceID(), root.SpanContext.SpanID())
		}
	}
	if decisions[0].Status.Code == codes.Error || decisions[1].Status.Code != codes.Error {
		t.Errorf("statuses: %+v, %+v; want the second refused", decisions[0].Status, decisions[1].Status)
	}
}
