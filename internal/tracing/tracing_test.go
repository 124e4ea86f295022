package tracing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/researchbot/researchbot/pipeline"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestConfigureIsOffUnlessTheOTELVariablesSayOtherwise(t *testing.T) {
	cases := []struct {
		name     string
		vars     map[string]string
		on       bool
		endpoint string
		problem  string
	}{
		{name: "nothing set", vars: nil},
		{name: "only a service name", vars: map[string]string{"OTEL_SERVICE_NAME": "rb"}},
		{name: "only a sampler", vars: map[string]string{"OTEL_TRACES_SAMPLER": "always_on"}},
		{name: "an endpoint", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}, on: true, endpoint: "http://collector:4318/v1/traces"},
		{name: "a traces endpoint wins", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/traces"}, on: true, endpoint: "http://b:4318/traces"},
		{name: "otlp exporter, default endpoint", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{name: "exporter none", vars: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}, endpoint: "http://a:4318/v1/traces"},
		{name: "SDK disabled", vars: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}},
		{name: "http/protobuf is fine", vars: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318"}, on: true, endpoint: "http://a:4318/v1/traces"},
		{name: "zipkin refused", vars: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, problem: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "grpc refused", vars: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_TRACES_EXPORTER": "otlp"}, problem: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Configure(env(c.vars))
			if c.problem != "" {
				if err == nil || !strings.Contains(err.Error(), c.problem) {
					t.Fatalf("err = %v, want one naming %s", err, c.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.On != c.on || (c.on && s.Endpoint != c.endpoint) {
				t.Fatalf("settings = %+v, want on=%v endpoint %q", s, c.on, c.endpoint)
			}
		})
	}
}

// TestOffStartsNothingAndChangesNothing: with no OTEL_* variable there is
// no exporter, no goroutine, and the wiring's clients and ports are the
// ones it passed in.
func TestOffStartsNothingAndChangesNothing(t *testing.T) {
	s, err := Configure(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	tr, err := Start(context.Background(), s)
	if err != nil || tr != nil {
		t.Fatalf("Start = %v, %v; want nil, nil", tr, err)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after Start, %d before", n, before)
	}
	if tr.Runs() != nil {
		t.Fatal("the engine got a Tracer although tracing is off")
	}
	c := &http.Client{}
	if tr.HTTPClient(c, 0) != c || tr.HTTPClient(nil, 0) != nil {
		t.Fatal("HTTPClient changed a client although tracing is off")
	}
	ctx := context.Background()
	if got, _ := tr.ModelCall(ctx, pipeline.Prompt{}, "m"); got != ctx {
		t.Fatal("ModelCall changed the context although tracing is off")
	}
	if got, _ := tr.Search(ctx, pipeline.SearchRequest{}); got != ctx {
		t.Fatal("Search changed the context although tracing is off")
	}
	if got, _ := tr.Fetch(ctx, "https://example.org/"); got != ctx {
		t.Fatal("Fetch changed the context although tracing is off")
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStartExportsOverOTLPHTTP: with an endpoint set, the spans of a run
// reach it as OTLP/HTTP protobuf when the process shuts tracing down.
func TestStartExportsOverOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var body []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.URL.Path+" "+r.Header.Get("Content-Type"))
		body = append(body, b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	s, err := Configure(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SERVICE_NAME": "rb-test"}))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Start(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	runs := tr.Runs()
	tc := runs.StartRun(context.Background(), "run-1")
	_, end := runs.StartStep(context.Background(), tc, "run-1", pipeline.StepPlan, 1)
	end(nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 || paths[0] != "/v1/traces application/x-protobuf" {
		t.Fatalf("collector got %q, want a POST to /v1/traces in protobuf", paths)
	}
	for _, want := range []string{"research run", "step plan", "rb-test", "run-1"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the export does not carry %q", want)
		}
	}
}

// recorded is a Tracing whose spans are kept in memory.
func recorded(t *testing.T) (*Tracing, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return New(tp), exp
}

// TestAStepContinuesTheTraceOfItsRunFromTheStoredContext: the trace context
// is a W3C traceparent; a step started elsewhere (another Tracing, as in
// another process) from it is a child of the run's first span.
func TestAStepContinuesTheTraceOfItsRunFromTheStoredContext(t *testing.T) {
	first, firstSpans := recorded(t)
	second, secondSpans := recorded(t)
	tc := first.Runs().StartRun(context.Background(), "run-1")
	if !strings.HasPrefix(tc, "00-") || len(strings.Split(tc, "-")) != 4 {
		t.Fatalf("trace context %q is not a traceparent", tc)
	}
	_, end := second.Runs().StartStep(context.Background(), tc, "run-1", pipeline.StepWrite, 2)
	end(errors.New("the model did not answer"))
	root := firstSpans.GetSpans()
	steps := secondSpans.GetSpans()
	if len(root) != 1 || len(steps) != 1 {
		t.Fatalf("spans: %d in the first process, %d in the second; want 1 and 1", len(root), len(steps))
	}
	step := steps[0]
	if step.SpanContext.TraceID() != root[0].SpanContext.TraceID() || step.Parent.SpanID() != root[0].SpanContext.SpanID() || !step.Parent.IsRemote() {
		t.Fatalf("step %s (parent %s) is not a remote child of the run's span %s", step.SpanContext.TraceID(), step.Parent.SpanID(), root[0].SpanContext.SpanID())
	}
	if step.Name != "step write" || step.Status.Description != "the model did not answer" {
		t.Fatalf("step span %q, status %+v", step.Name, step.Status)
	}
}

// TestCallsOutsideARunAreNotTraced: an HTTP call without a run's span in
// its context (Socket Mode, a preflight check) makes no trace of its own.
func TestCallsOutsideARunAreNotTraced(t *testing.T) {
	tr, spans := recorded(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			t.Error("a trace header was sent to the server called")
		}
	}))
	defer srv.Close()
	c := tr.HTTPClient(srv.Client(), 0)
	get := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/search?q=x&key=secret", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	get(context.Background())
	if n := len(spans.GetSpans()); n != 0 {
		t.Fatalf("%d spans for a call outside any run", n)
	}
	ctx, end := tr.Runs().StartStep(context.Background(), tr.Runs().StartRun(context.Background(), "r"), "r", pipeline.StepSearch, 1)
	get(ctx)
	end(nil)
	var call *tracetest.SpanStub
	for i, s := range spans.GetSpans() {
		if s.SpanKind == trace.SpanKindClient {
			call = &spans.GetSpans()[i]
		}
	}
	if call == nil {
		t.Fatal("no client span for a call within a step")
	}
	for _, kv := range call.Attributes {
		if strings.Contains(kv.Value.String(), "secret") {
			t.Fatalf("attribute %s carries the query string: %s", kv.Key, kv.Value.String())
		}
	}
}

func TestEndpointForLogMasksAPassword(t *testing.T) {
	s, err := Configure(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://user:s3cret@collector.example:4318"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.EndpointForLog(); strings.Contains(got, "s3cret") || !strings.Contains(got, "collector.example:4318/v1/traces") {
		t.Fatalf("EndpointForLog = %q", got)
	}
}

// TestConfigureReadsExactlyTheVariables: every variable Configure asks for
// is listed by Variables (so `researchbot env` shows it), and every one
// listed is read.
func TestConfigureReadsExactlyTheVariables(t *testing.T) {
	asked := map[string]bool{}
	_, _ = Configure(func(k string) string { asked[k] = true; return "" })
	listed := map[string]bool{}
	for _, v := range Variables() {
		listed[v.Name] = true
		if !asked[v.Name] {
			t.Errorf("%s is listed but Configure never reads it", v.Name)
		}
	}
	for n := range asked {
		if !listed[n] {
			t.Errorf("Configure reads %s, which Variables does not list", n)
		}
	}
}

// TestADecisionBelongsToItsRunsTrace: a decision handled outside any span
// (the bot, in serve) is a span of the run's trace, a remote child of the
// run's first span recorded by another process, with its status; the
// context it returns carries it; a run without a trace context, or with one
// that does not parse, records none and keeps the context it was given.
func TestADecisionBelongsToItsRunsTrace(t *testing.T) {
	worker, workerSpans := recorded(t)
	serve, serveSpans := recorded(t)
	tc := worker.Runs().StartRun(context.Background(), "run-1")
	ctx, end := serve.StartDecision(context.Background(), tc, "run-1", "plan_review", "approve")
	inDecision := trace.SpanContextFromContext(ctx)
	end(nil)
	_, end = serve.StartDecision(context.Background(), tc, "run-1", "plan_review", "reject")
	end(errors.New("already decided"))
	for _, c := range []string{"", "garbage"} {
		ctx, end := serve.StartDecision(context.Background(), c, "run-2", "plan_review", "approve")
		if trace.SpanContextFromContext(ctx).IsValid() {
			t.Errorf("trace context %q: the context carries a span", c)
		}
		end(nil)
	}
	var nilTracing *Tracing
	_, end = nilTracing.StartDecision(context.Background(), tc, "run-1", "plan_review", "approve")
	end(nil)

	root := workerSpans.GetSpans()[0]
	got := serveSpans.GetSpans()
	if len(got) != 2 {
		t.Fatalf("%d decision spans, want 2 (none for a run without a trace context)", len(got))
	}
	if !inDecision.Equal(got[0].SpanContext) {
		t.Errorf("the context returned carries %v, not the decision's span %v", inDecision, got[0].SpanContext)
	}
	for i, d := range got {
		if d.SpanContext.TraceID() != root.SpanContext.TraceID() || d.Parent.SpanID() != root.SpanContext.SpanID() || !d.Parent.IsRemote() {
			t.Errorf("decision %d (trace %s, parent %s) is not a child of the run's span %s", i, d.SpanContext.TraceID(), d.Parent.SpanID(), root.SpanContext.SpanID())
		}
		if d.Name != "decision plan_review" {
			t.Errorf("decision %d: name %q", i, d.Name)
		}
	}
	attrs := map[attribute.Key]string{}
	for _, a := range got[0].Attributes {
		attrs[a.Key] = a.Value.String()
	}
	if attrs[keyRunID] != "run-1" || attrs[keyDefID] != "plan_review" || attrs[keyAction] != "approve" {
		t.Errorf("attributes %v", attrs)
	}
	if got[0].Status.Code != codes.Unset || got[1].Status.Code != codes.Error || got[1].Status.Description != "already decided" {
		t.Errorf("statuses %+v, %+v", got[0].Status, got[1].Status)
	}
}
