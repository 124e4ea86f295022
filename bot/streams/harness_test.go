package streams

// The streams feature's test harness: the feature plugged into a real
// bot.App (bottest's, as internal/app/roles plugs it), on a fake Slack, a real Redis,
// the real scheduler service with a runner that only records, a scripted
// conversation model and an engine that only keeps the runs people start.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
	"github.com/researchbot/researchbot/bot/bottest"
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
	requester = bottest.Requester
	stranger  = bottest.Stranger
	approver  = bottest.Approver
	chanIn    = bottest.Channel
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

// streamHarness is a bot.App (bottest's) with the streams feature on the
// real scheduler service (and a runner that only records), a real Redis and
// a scripted model, wired to a fake Slack.
type streamHarness struct {
	*bottest.Harness
	t      *testing.T
	fake   *slackfake.Server
	ctx    context.Context
	rdb    *redis.Client
	engine *bottest.Engine
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
	h := &streamHarness{t: t, model: &scriptModel{props: props}, runner: &fakeRunner{}}
	h.Harness = bottest.New(t, func(b *bottest.Harness, c *bot.Config) {
		svc, err := scheduler.NewService(scheduler.ServiceConfig{Store: redisstore.NewStreams(b.Redis, "rb:"), Runner: h.runner})
		if err != nil {
			t.Fatal(err)
		}
		h.svc = svc
		var convs ConversationStore = redisstore.NewConversations(b.Redis, "rb:", 0)
		if wrap != nil {
			convs = wrap(convs)
		}
		st, err := New(Config{Service: svc, Conversations: convs, Model: h.model, Kit: b.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Checkpoints = bot.CheckpointsConfig{Approvers: map[string][]string{chanIn: {approver}}}
		c.Streams = bot.StreamsUIConfig{Handler: st, Mentions: st}
		// The assistant panel, whose "Start a research stream" opens a
		// stream's conversation, plugged in as the assembly does.
		panel, err := assistant.New(assistant.Config{Memory: b.Memory, Streams: st, Mentions: st, Kit: b.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Assistant = panel
	})
	h.fake, h.ctx, h.rdb, h.engine = h.Fake, h.Ctx, h.Redis, h.Engine.(*bottest.Engine)
	return h
}

// stop stops the App (as a killed process would stop answering).
func (h *streamHarness) stop() { h.Stop() }

// slash runs "/research text" as user in channel.
func (h *streamHarness) slash(user, channel, text string) slackfake.Ack {
	h.t.Helper()
	return h.Slash(user, channel, text)
}

// wait waits for cond.
func (h *streamHarness) wait(what string, cond func() bool) {
	h.t.Helper()
	h.Wait(what, cond)
}

// ephemeralWith waits for an ephemeral message to user containing text.
func (h *streamHarness) ephemeralWith(channel, user, text string) slackfake.Message {
	h.t.Helper()
	return h.EphemeralWith(channel, user, text)
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
	h.Mention(user, channel, thread, text)
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
	return bottest.InThread(fake, channel, thread, subs...)
}

// rawJSON is v as JSON without HTML escaping, so "<" reads as "<".
func rawJSON(v any) json.RawMessage { return bottest.RawJSON(v) }
