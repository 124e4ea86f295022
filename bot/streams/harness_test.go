package streams

// The streams feature's test harness: the feature plugged into a real
// bot.App (as internal/app/roles plugs it), on a fake Slack, a real Redis,
// the real scheduler service with a runner that only records, a scripted
// conversation model and an engine that only keeps the runs people start.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestMain checks that every goroutine the tests start (the App's Socket
// Mode loop and workers) has stopped when they end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	requester = "U0REQ0001"
	stranger  = "U0OTHER01"
	approver  = "U0APPR001"
	chanIn    = "C0RESEARCH"
)

// scriptModel is a scheduler.TurnProposer answering from a list; a nil entry
// fails like an unreachable model.
type scriptModel struct {
	mu    sync.Mutex
	props []*scheduler.Proposal
	calls int
}

func (m *scriptModel) Propose(context.Context, scheduler.Conversation, scheduler.ConversationAction) (scheduler.Proposal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.calls > len(m.props) || m.props[m.calls-1] == nil {
		return scheduler.Proposal{}, errors.New("connection refused")
	}
	return *m.props[m.calls-1], nil
}

func (m *scriptModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// fakeRunner starts runs that never finish.
type fakeRunner struct {
	mu   sync.Mutex
	reqs []pipeline.Request
}

func (r *fakeRunner) Start(_ context.Context, req pipeline.Request) (*pipeline.Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return &pipeline.Run{ID: "run-" + string(rune('a'+len(r.reqs))), Status: pipeline.StatusQueued, Origin: req.Origin, CreatedAt: time.Now()}, nil
}

func (r *fakeRunner) Load(_ context.Context, id string) (*pipeline.Run, error) {
	return &pipeline.Run{ID: id, Status: pipeline.StatusRunning, CreatedAt: time.Now()}, nil
}

// Cancel cancels nothing: these tests do not sweep digests.
func (r *fakeRunner) Cancel(context.Context, string, string) error { return nil }

func (r *fakeRunner) requests() []pipeline.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Request(nil), r.reqs...)
}

// keepEngine is the App's bot.Engine in these tests: it keeps the research
// runs people start (a question that is no stream command starts one) and
// releases them when their root message is posted; nothing runs, and the
// checkpoint calls find no run.
type keepEngine struct {
	mu   sync.Mutex
	runs map[string]*pipeline.Run
}

var _ bot.Engine = (*keepEngine)(nil)

func (e *keepEngine) Start(_ context.Context, req pipeline.Request) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &pipeline.Run{ID: req.ID, Question: req.Question, Mode: req.Mode, Depth: req.Depth, RequestedBy: req.RequestedBy,
		Origin: req.Origin, Status: pipeline.StatusQueued, Held: req.Held, CreatedAt: time.Now()}
	if r.ID == "" {
		r.ID = fmt.Sprintf("run-%d", len(e.runs)+1)
	}
	e.runs[r.ID] = r
	c := *r
	return &c, nil
}

func (e *keepEngine) Release(_ context.Context, runID, threadTS string) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	r.Held, r.Status, r.Origin.ThreadTS = false, pipeline.StatusRunning, threadTS
	c := *r
	return &c, nil
}

func (e *keepEngine) Load(_ context.Context, runID string) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	c := *r
	return &c, nil
}

func (e *keepEngine) List(_ context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*pipeline.Run
	for _, r := range e.runs {
		if f.RequestedBy == "" || r.RequestedBy == f.RequestedBy {
			c := *r
			out = append(out, &c)
		}
	}
	return out, nil
}

func (e *keepEngine) Withdraw(_ context.Context, runID, _ string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.runs, runID)
	return nil
}

func (e *keepEngine) Decide(context.Context, string, checkpoints.Decision) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}
func (e *keepEngine) Opened(context.Context, string, string) error { return nil }
func (e *keepEngine) Cancel(context.Context, string, string) error { return pipeline.ErrNotFound }
func (e *keepEngine) Skip(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}
func (e *keepEngine) Retry(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}
func (e *keepEngine) ContinueWithout(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}
func (e *keepEngine) OfferLostAgain(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}
func (e *keepEngine) NeverDomain(context.Context, string, string, string) (*pipeline.Run, string, error) {
	return nil, "", pipeline.ErrNotFound
}
func (e *keepEngine) RecordVerdict(context.Context, string, pipeline.Verdict) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}

// streamHarness is a bot.App with the streams feature on the real
// scheduler service (and a runner that only records), a real Redis and a
// scripted model, wired to a fake Slack.
type streamHarness struct {
	t      *testing.T
	fake   *slackfake.Server
	ctx    context.Context
	rdb    *redis.Client
	engine *keepEngine
	stop   func() // stops the App (as a killed process would stop answering)
	model  *scriptModel
	svc    *scheduler.Service
	runner *fakeRunner
}

func newStreamHarness(t *testing.T, props ...*scheduler.Proposal) *streamHarness {
	t.Helper()
	return newStreamHarnessWith(t, nil, props...)
}

// newStreamHarnessWith is newStreamHarness with the conversation store
// wrapped by wrap (nil: as it is).
func newStreamHarnessWith(t *testing.T, wrap func(ConversationStore) ConversationStore, props ...*scheduler.Proposal) *streamHarness {
	t.Helper()
	_, rdb := redistest.Start(t)
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	fake.AddUser(requester, "ada", "Europe/Paris")
	fake.AddUser(stranger, "bob", "UTC")
	fake.AddUser(approver, "cy", "UTC")
	logs := &lockedBuffer{}
	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, testWriter{t})
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))

	h := &streamHarness{t: t, fake: fake, ctx: context.Background(), rdb: rdb, engine: &keepEngine{runs: map[string]*pipeline.Run{}},
		model: &scriptModel{props: props}, runner: &fakeRunner{}}
	svc, err := scheduler.NewService(scheduler.ServiceConfig{Store: redisstore.NewStreams(rdb, "rb:"), Runner: h.runner})
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	var convs ConversationStore = redisstore.NewConversations(rdb, "rb:", 0)
	if wrap != nil {
		convs = wrap(convs)
	}
	st, err := New(Config{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Service: svc, Conversations: convs, Model: h.model, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	app, err := bot.New(bot.Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Engine: h.engine,
		Memory: redisstore.NewSlackMemory(rdb), Budget: redisstore.NewRateLimiter(rdb, "slack"), Metrics: bot.NewMetrics(),
		Checkpoints: bot.CheckpointsConfig{Approvers: map[string][]string{chanIn: {approver}}}, Logger: log, Workers: 4, Queue: 32,
		Streams: bot.StreamsUIConfig{Handler: st, Mentions: st}})
	if err != nil {
		t.Fatal(err)
	}
	h.stop = runApp(t, app, fake)
	t.Cleanup(func() {
		h.stop()
		if l := logs.String(); strings.Contains(l, fake.BotToken()) || strings.Contains(l, fake.AppToken()) {
			t.Error("a token appears in the logs")
		}
		for _, a := range fake.Acks() {
			if a.Latency >= 3*time.Second {
				t.Errorf("envelope %s (%s) acked after %s", a.EnvelopeID, a.Type, a.Latency)
			}
		}
	})
	return h
}

// runApp runs app until the returned stop is called (idempotent) and waits
// for its Socket Mode connection; an error Run returns fails the test.
func runApp(t *testing.T, app *bot.App, fake *slackfake.Server) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := fake.WaitConnected(wctx); err != nil {
		stop()
		t.Fatal(err)
	}
	return stop
}

// slash runs "/research text" as user in channel.
func (h *streamHarness) slash(user, channel, text string) slackfake.Ack {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	ack, err := h.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: text, UserID: user, ChannelID: channel})
	if err != nil {
		h.t.Fatalf("slash command: %v", err)
	}
	return ack
}

// wait waits for cond for up to 5 s.
func (h *streamHarness) wait(what string, cond func() bool) {
	h.t.Helper()
	if !h.fake.WaitUntil(5*time.Second, cond) {
		var b strings.Builder
		for _, m := range h.fake.Messages(chanIn) {
			b.WriteString(m.TS + " " + m.ThreadTS + " eph=" + map[bool]string{true: "y", false: "n"}[m.Ephemeral] + " " + m.Text + "\n")
		}
		h.t.Fatalf("timed out waiting for %s; messages:\n%s", what, b.String())
	}
}

// ephemeralWith waits for an ephemeral message to user containing text.
func (h *streamHarness) ephemeralWith(channel, user, text string) slackfake.Message {
	h.t.Helper()
	var found slackfake.Message
	h.wait("an ephemeral message with "+text, func() bool {
		for _, m := range h.fake.Messages(channel) {
			if m.Ephemeral && m.ToUser == user && strings.Contains(string(m.Blocks)+m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// turns are the bot's visible messages in a thread, root excluded.
func (h *streamHarness) turns(channel, thread string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range h.fake.Thread(channel, thread) {
		if !m.Ephemeral && m.BotID != "" && m.TS != thread {
			out = append(out, m)
		}
	}
	return out
}

// waitShown waits until the bot has remembered which message shows the
// thread's turn i (0 is the first). A person answers after reading a turn;
// the tests wait for this so that each answer meets the state a person
// would (an answer typed while the bot saves its turn is covered by
// TestStreamAnswerTypedAsTheTurnIsRememberedIsApplied).
func (h *streamHarness) waitShown(channel, thread string, i int) {
	h.t.Helper()
	convs := redisstore.NewConversations(h.rdb, "rb:", 0)
	h.wait(fmt.Sprintf("turn %d remembered", i+1), func() bool {
		c, _, ok, err := convs.Get(context.Background(), channel, thread)
		turns := h.turns(channel, thread)
		return err == nil && ok && len(turns) > i && c.Shown == turns[i].TS
	})
}

// start runs /research stream new and returns the thread and first turn.
func (h *streamHarness) start(user, channel string) (string, slackfake.Message) {
	h.t.Helper()
	h.slash(user, channel, "stream new")
	var thread string
	h.wait("the root message", func() bool {
		for _, m := range h.fake.Messages(channel) {
			if m.Text == "New research stream" {
				thread = m.TS
				return len(h.turns(channel, thread)) == 1
			}
		}
		return false
	})
	h.waitShown(channel, thread, 0)
	return thread, h.turns(channel, thread)[0]
}

func (h *streamHarness) reply(user, channel, thread, text string) {
	h.t.Helper()
	if err := h.fake.PostUserMention(context.Background(), user, channel, thread, text); err != nil {
		h.t.Fatal(err)
	}
}

func proposal(next scheduler.ConversationStep, target scheduler.SpecField, options ...string) *scheduler.Proposal {
	return &scheduler.Proposal{Mode: scheduler.ModeSuggestion, Message: "Pick some.", TargetField: target,
		ExtractedData: []scheduler.FieldValue{}, Suggestions: []string{}, Options: options, NextStep: next}
}

func testSpec() scheduler.Spec {
	return scheduler.Spec{
		Channel: chanIn, Purpose: "Follow heat pumps", BusinessGoals: []string{"Plan"}, ExpectedOutcomes: "Decisions",
		Name: "Pumps", Type: scheduler.TypeMarket, FocusAreas: []string{"Cold climates"}, Keywords: []string{"heat pump"},
		Frequency: scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}
}

// inThread returns the latest visible message of a thread whose blocks
// contain every one of subs.
func inThread(fake *slackfake.Server, channel, thread string, subs ...string) (slackfake.Message, bool) {
	msgs := fake.Thread(channel, thread)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Ephemeral {
			continue
		}
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(raw(m), s)
		}
		if ok {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// raw is a message's blocks as JSON without HTML escaping.
func raw(m slackfake.Message) string {
	var blocks any
	_ = json.Unmarshal(m.Blocks, &blocks)
	return string(rawJSON(blocks))
}

// rawJSON is v as JSON without HTML escaping, so "<" reads as "<".
func rawJSON(v any) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return json.RawMessage(b.String())
}

// lockedBuffer is a log sink safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
