package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/decisions"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/app/roles"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// memoryTracing is a Tracing whose spans are kept in memory.
func memoryTracing(t *testing.T) (*tracing.Tracing, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tracing.New(tp), exp
}

// TestADecisionInServeAndItsSlackCallsAreOneTrace wires the bot as serve
// does (its Slack client traced, its decisions recorded) against the fake
// Slack, the real engine and Redis: the checkpoint's message is posted
// within the run's trace (begun by another process), and a person's click
// on it is a decision span of that trace whose Slack calls (the answer to
// the person) are its children, each named by its Web API method; a
// recorded decision is one too, without an error. A Slack call made
// outside any run (Socket Mode's connection) is a trace of its own. No
// token or message text is in any span.
func TestADecisionInServeAndItsSlackCallsAreOneTrace(t *testing.T) {
	srv, _ := redistest.Start(t)
	fake := slackfake.New(t)
	// The test helpers above live until the test ends.
	ignore := goleak.IgnoreCurrent()
	defer func() {
		// The traced client, like the bot's own, keeps its connections to
		// Slack in http.DefaultTransport's pool.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		goleak.VerifyNone(t, ignore)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := config.Load(func(k string) string { return map[string]string{"REDIS_URL": srv.URL}[k] })
	if err != nil {
		t.Fatal(err)
	}
	spans, exp := memoryTracing(t)
	a, err := app.New(ctx, cfg, app.Options{Tracing: spans})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	const channel, user = "C0RESEARCH", "U0REQ0001"
	fake.AddChannel(channel, "research", true)
	fake.AddUser(user, "ana", "Europe/Oslo")

	// As roles.New wires them for serve.
	sender := bot.NewSender(bot.SenderConfig{BotToken: fake.BotToken(), AppToken: fake.AppToken(), APIURL: fake.APIURL(),
		HTTPClient: spans.SlackHTTPClient(nil, roles.SlackTimeout)})
	memory := redisstore.NewSlackMemory(a.Conn.Client)
	presenter, err := bot.NewPresenter(bot.PresenterConfig{Sender: sender, Memory: memory})
	if err != nil {
		t.Fatal(err)
	}
	defer presenter.Close()
	checkpointButtons, err := decisions.New(decisions.Config{Engine: a.Engine, Kit: bot.Kit{Sender: sender}})
	if err != nil {
		t.Fatal(err)
	}
	slackApp, err := bot.New(bot.Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Sender: sender,
		Engine: a.Engine, Checkpoints: bot.CheckpointsConfig{Decisions: spans}, Memory: memory, Budget: redisstore.NewRateLimiter(a.Conn.Client, "slack"),
		HTTPClient: spans.SlackHTTPClient(nil, roles.SlackTimeout), Features: []bot.Registrar{checkpointButtons}})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- slackApp.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	// Two runs waiting at their plan review, begun (and their checkpoints
	// shown) by a worker: the first with its plan's required fields empty,
	// so Approve is refused; the second's is recorded.
	worker, workerExp := memoryTracing(t)
	now := time.Now().UTC().Truncate(time.Second)
	def := checkpoints.Builtins(now)[0]
	plan := map[string]any{checkpoints.KeySubQuestions: "How cold?", checkpoints.KeyQueries: "web: heat pumps cold climate"}
	var buttons []string
	for i, values := range []map[string]any{nil, plan} {
		id := []string{"r-t1", "r-t2"}[i]
		inst := checkpoints.NewInstance(def, id+".cp", id, nil, def.Fields, values, now)
		if err := inst.Offer(now, "engine"); err != nil {
			t.Fatal(err)
		}
		run := &pipeline.Run{ID: id, Question: "How well do heat pumps work?", Mode: checkpoints.ModeGuided, RequestedBy: user,
			Origin: pipeline.Origin{Kind: "slack", Queue: "runs", Channel: channel, ThreadTS: "1700000000.000100"},
			Status: pipeline.StatusWaiting, Step: pipeline.StepPlan, Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID, CreatedAt: now, UpdatedAt: now,
			TraceContext: worker.Runs().StartRun(ctx, id)}
		if err := a.Store.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		sctx, end := spans.Runs().StartCheckpoint(ctx, run.TraceContext, id, def.ID)
		err := presenter.Offer(sctx, run, &run.Checkpoints[0])
		end(err)
		if err != nil {
			t.Fatal(err)
		}
		var ts string
		for _, m := range fake.Messages(channel) {
			if strings.Contains(string(m.Blocks), id+".cp") {
				ts = m.TS
			}
		}
		if ts == "" {
			t.Fatalf("no checkpoint message for %s", id)
		}
		buttons = append(buttons, ts)
	}
	for _, ts := range buttons {
		if _, err := fake.ClickButton(ctx, user, channel, ts, blockkit.ActionApprove, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	var decisions []tracetest.SpanStub
	if !fake.WaitUntil(30*time.Second, func() bool {
		decisions = decisions[:0]
		for _, s := range exp.GetSpans() {
			if s.Name == "decision "+def.ID {
				decisions = append(decisions, s)
			}
		}
		return len(decisions) == 2
	}) {
		t.Fatalf("%d decision spans, want 2", len(decisions))
	}
	roots := map[string]tracetest.SpanStub{}
	for _, s := range workerExp.GetSpans() {
		roots[s.SpanContext.TraceID().String()] = s
	}
	all := exp.GetSpans()
	children := func(parent tracetest.SpanStub) []string {
		var names []string
		for _, s := range all {
			if s.Parent.SpanID() == parent.SpanContext.SpanID() && s.SpanContext.TraceID() == parent.SpanContext.TraceID() {
				names = append(names, s.Name)
			}
		}
		return names
	}
	var refused, recorded int
	for _, d := range decisions {
		root, ok := roots[d.SpanContext.TraceID().String()]
		if !ok || d.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("decision %s is not under its run's first span", d.SpanContext.SpanID())
		}
		switch d.Status.Code {
		case codes.Error:
			refused++
			if got := children(d); len(got) != 1 || got[0] != "slack chat.postEphemeral" {
				t.Errorf("the refused decision's Slack calls: %v, want its answer (slack chat.postEphemeral)", got)
			}
		default:
			recorded++
		}
	}
	if refused != 1 || recorded != 1 {
		t.Errorf("%d refused and %d recorded decisions, want one each", refused, recorded)
	}
	var connect bool
	for _, s := range all {
		switch {
		case strings.HasPrefix(s.Name, "checkpoint "):
			if got := children(s); !contains(got, "slack chat.postMessage") {
				t.Errorf("showing a checkpoint made %v, want its message (slack chat.postMessage)", got)
			}
		case s.Name == "slack apps.connections.open":
			connect = true
			if s.Parent.IsValid() {
				t.Errorf("Socket Mode's connection is a child of %s", s.Parent.SpanID())
			}
		}
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, fake.BotToken()) || strings.Contains(v, fake.AppToken()) || strings.Contains(v, "heat pumps") {
				t.Errorf("span %s: attribute %s = %q", s.Name, kv.Key, v)
			}
		}
	}
	if !connect {
		t.Error("no span for Socket Mode's apps.connections.open")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
