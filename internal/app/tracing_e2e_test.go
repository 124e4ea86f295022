package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// spanRecorder is a Tracing whose spans are kept in memory, as one
// process's tracing would export them.
func spanRecorder(t *testing.T) (*tracing.Tracing, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tracing.New(tp), exp
}

// tracedHarness is newHarnessAt with tracing: its own fake web and model,
// sharing only the Redis at redisURL with any other. Its worker is stopped
// and its App closed by stop (idempotent), or when the test ends.
func tracedHarness(t *testing.T, redisURL string, tr *tracing.Tracing) (h *harness, stop func()) {
	t.Helper()
	res := &researchtest.Researcher{}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	model := llmtest.NewServer(t, res.Respond)
	env := map[string]string{"LLM_PRICES": "gpt-4o-mini=0.15/0.6"}
	h = &harness{t: t, web: web, llm: model, res: res, rec: newRecorder(), clock: &researchtest.Clock{}}
	a, err := New(context.Background(), testConfig(t, redisURL, model.URL(), web.URL(), env), Options{
		Presenters: map[string]pipeline.Presenter{"test": h.rec}, DefaultQueue: "test", Clock: h.clock,
		RetryDelay: func(int, error) time.Duration { return 50 * time.Millisecond }, Tracing: tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.app = a
	stopWorker, err := a.StartWorker([]string{"test"})
	if err != nil {
		_ = a.Close()
		t.Fatal(err)
	}
	var closed bool
	stop = func() {
		if !closed {
			closed = true
			stopWorker()
			_ = a.Close()
		}
	}
	t.Cleanup(stop)
	return h, stop
}

func attr(s tracetest.SpanStub, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// byName counts spans by name, with "chat …", "step …" and HTTP methods
// each counted under their first word too.
func byName(spans tracetest.SpanStubs) map[string]int {
	n := map[string]int{}
	for _, s := range spans {
		n[s.Name]++
		if first, _, ok := strings.Cut(s.Name, " "); ok {
			n[first]++
		}
	}
	return n
}

// TestARunIsOneTraceWithItsStepsModelCallsSearchesAndFetches: every span of
// a run shares its trace; the steps are children of the run's span, and the
// model calls (with their tokens and cost), searches and fetches children
// of the steps.
func TestARunIsOneTraceWithItsStepsModelCallsSearchesAndFetches(t *testing.T) {
	srv, _ := redistest.Start(t)
	tr, exp := spanRecorder(t)
	h, stop := tracedHarness(t, srv.URL, tr)
	run := h.start(checkpoints.ModeAuto, pipeline.Limits{})
	if r := h.finish(); r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s)", r.Status, r.Failure)
	}
	stored, err := h.app.Store.Load(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	spans := exp.GetSpans()
	names := byName(spans)
	t.Logf("%d spans: %v", len(spans), names)
	for _, want := range []string{"research run", "step plan", "step search", "step fetch", "step rank", "step analyze", "step write", "step review", "search", "fetch", "chat gpt-4o-mini", "GET", "POST"} {
		if names[want] == 0 {
			t.Errorf("no %q span", want)
		}
	}
	var root tracetest.SpanStub
	ids := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = s
		if s.Name == "research run" {
			root = s
		}
	}
	if want := "00-" + root.SpanContext.TraceID().String() + "-" + root.SpanContext.SpanID().String() + "-01"; stored.TraceContext != want {
		t.Fatalf("the run keeps trace context %q, want the run span's %q", stored.TraceContext, want)
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Fatalf("span %q is in trace %s, the run's is %s", s.Name, s.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
		parent := ids[s.Parent.SpanID()]
		switch first, _, _ := strings.Cut(s.Name, " "); first {
		case "step":
			if s.Parent.SpanID() != root.SpanContext.SpanID() {
				t.Errorf("%q is not a child of the run's span", s.Name)
			}
		case "chat", "search", "fetch":
			if !strings.HasPrefix(parent.Name, "step ") {
				t.Errorf("%q is a child of %q, not of a step", s.Name, parent.Name)
			}
		case "GET", "POST":
			if p, _, _ := strings.Cut(parent.Name, " "); p != "chat" && p != "search" && p != "fetch" && p != "step" {
				t.Errorf("HTTP span %q is a child of %q", s.Name, parent.Name)
			}
		}
		if strings.HasPrefix(s.Name, "chat ") {
			in, _ := attr(s, "gen_ai.usage.input_tokens")
			out, _ := attr(s, "gen_ai.usage.output_tokens")
			model, _ := attr(s, "gen_ai.request.model")
			cost, _ := attr(s, "researchbot.llm.cost_usd")
			if in.AsInt64() <= 0 || out.AsInt64() <= 0 || model.AsString() != "gpt-4o-mini" || cost.AsFloat64() <= 0 {
				t.Errorf("model span %q: input %d, output %d tokens, model %q, cost %v", s.Name, in.AsInt64(), out.AsInt64(), model.AsString(), cost.AsFloat64())
			}
		}
	}
}

// TestARunAdvancedByTwoProcessesIsOneTrace: one process plans the run and
// stops at the plan review; another, sharing only Redis (its own model,
// web, tracing and exporter), takes the decision and finishes the run. Its
// step and checkpoint spans continue the first process's trace, children
// of the run's span through the trace context stored with the run.
func TestARunAdvancedByTwoProcessesIsOneTrace(t *testing.T) {
	srv, _ := redistest.Start(t)
	firstTracing, firstSpans := spanRecorder(t)
	first, stopFirst := tracedHarness(t, srv.URL, firstTracing)
	run := first.start(checkpoints.ModeGuided, pipeline.Limits{})
	plan := first.next()
	stopFirst()

	secondTracing, secondSpans := spanRecorder(t)
	second, _ := tracedHarness(t, srv.URL, secondTracing)
	second.decide(plan, checkpoints.Decision{Action: checkpoints.Approve})
	second.decide(second.next(), checkpoints.Decision{Action: checkpoints.Approve}) // the draft
	if r := second.finish(); r.Status != pipeline.StatusCompleted || r.ID != run.ID {
		t.Fatalf("run %s: status %s (%s)", r.ID, r.Status, r.Failure)
	}

	var root tracetest.SpanStub
	for _, s := range firstSpans.GetSpans() {
		if s.Name == "research run" {
			root = s
		}
	}
	if !root.SpanContext.IsValid() {
		t.Fatal("the first process made no span for the run")
	}
	if names := byName(firstSpans.GetSpans()); names["step plan"] == 0 || names["checkpoint"] != 1 || names["step search"] != 0 {
		t.Fatalf("the first process's spans: %v; want the plan, its review shown, and no search", names)
	}
	steps := 0
	for _, s := range secondSpans.GetSpans() {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Fatalf("the second process's span %q is in trace %s, the run's is %s", s.Name, s.SpanContext.TraceID(), root.SpanContext.TraceID())
		}
		if strings.HasPrefix(s.Name, "step ") || strings.HasPrefix(s.Name, "checkpoint ") {
			steps++
			if s.Parent.SpanID() != root.SpanContext.SpanID() || !s.Parent.IsRemote() {
				t.Errorf("%q is not parented by the stored context (parent %s, remote %v)", s.Name, s.Parent.SpanID(), s.Parent.IsRemote())
			}
		}
	}
	names := byName(secondSpans.GetSpans())
	t.Logf("second process: %v", names)
	if steps == 0 || names["step search"] == 0 || names["step write"] == 0 || names["checkpoint"] != 1 || names["chat"] == 0 || names["fetch"] == 0 {
		t.Fatalf("the second process's spans: %v; want its steps, the draft's review shown, model calls and fetches", names)
	}
}
