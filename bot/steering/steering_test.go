package steering_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/steering"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	user, other, channel = bottest.Requester, bottest.Stranger, bottest.Channel
	runID                = "run-st1"
)

// steerEngine is bottest's Engine whose Steer adds the note to the run, as
// the engine does, and remembers each call.
type steerEngine struct {
	*bottest.Engine
	mu    sync.Mutex
	notes []string
}

func (e *steerEngine) Steer(ctx context.Context, id, by, text string) (*pipeline.Run, pipeline.SteeringNote, error) {
	e.mu.Lock()
	e.notes = append(e.notes, by+": "+text)
	e.mu.Unlock()
	r, err := e.Load(ctx, id)
	if err != nil {
		return nil, pipeline.SteeringNote{}, err
	}
	n := pipeline.SteeringNote{By: by, Text: text}
	r.Notes = append(r.Notes, n)
	e.Put(r)
	return r, n, nil
}

func (e *steerEngine) steered() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.notes...)
}

// fixture is the App with steering plugged in as the assembly plugs it (and
// no follow-ups), and a run of status in Channel's thread.
type fixture struct {
	*bottest.Harness
	engine *steerEngine
	thread string
}

func newFixture(t *testing.T, status pipeline.Status, limit bot.Limit) *fixture {
	t.Helper()
	f := &fixture{engine: &steerEngine{Engine: bottest.NewEngine()}}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		st, err := steering.New(steering.Config{Engine: f.engine, Budget: c.Budget, Limit: limit, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Steering = st
	})
	api := slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	_, ts, err := api.PostMessage(channel, slack.MsgOptionText("Researching: heat pumps", false))
	if err != nil {
		t.Fatal(err)
	}
	f.thread = ts
	f.engine.Put(&pipeline.Run{ID: runID, Question: "How well do heat pumps work in cold climates?", RequestedBy: user, Status: status,
		Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel, ThreadTS: ts}})
	if err := f.Memory.RememberRunOfThread(f.Ctx, channel, ts, runID, bot.MessageKeyTTL); err != nil {
		t.Fatal(err)
	}
	return f
}

// inThread waits for a message of the bot in the run's thread containing
// text.
func (f *fixture) inThread(text string) {
	f.Wait("a message in the thread with "+text, func() bool {
		for _, m := range f.Fake.Messages(channel) {
			if m.ThreadTS == f.thread && m.BotID != "" && !m.Ephemeral && strings.Contains(string(m.Blocks)+m.Text, text) {
				return true
			}
		}
		return false
	})
}

// TestSteeringARunningResearch: a stranger is told who may steer and
// nothing is recorded; the requester's note is recorded and acknowledged in
// the thread; "stop" is the cancel flow; a note over the per-run rate is
// refused and counted.
func TestSteeringARunningResearch(t *testing.T) {
	f := newFixture(t, pipeline.StatusRunning, bot.Limit{Rate: 1, Period: time.Hour})

	f.Mention(other, channel, f.thread, "only look at Norway")
	f.EphemeralWith(channel, other, "can steer it while it runs")

	f.Mention(user, channel, f.thread, "only look at Norway")
	f.inThread("Noted: only look at Norway")
	if got := f.engine.steered(); len(got) != 1 || got[0] != user+": only look at Norway" {
		t.Errorf("notes recorded %q, want only the requester's", got)
	}

	f.Mention(user, channel, f.thread, "stop")
	f.EphemeralWith(channel, user, blockkit.ActionCancelConfirm)

	f.Mention(user, channel, f.thread, "and Sweden")
	f.EphemeralWith(channel, user, "at most 1 steering notes per hour")
	if got := f.engine.steered(); len(got) != 1 {
		t.Errorf("a note over the rate was recorded: %q", got)
	}
	if n := bottest.CounterValue(t, f.Metrics, "researchbot_requests_rate_limited_total", "steering"); n != 1 {
		t.Errorf("steering refusals counted %v, want 1", n)
	}
}

// TestSteeringPassesOnAFinishedRun: a mention in a finished run's thread is
// not a note: steering passes it on, and with no follow-ups plugged in the
// App says they are not enabled.
func TestSteeringPassesOnAFinishedRun(t *testing.T) {
	f := newFixture(t, pipeline.StatusCompleted, bot.Limit{})
	f.Mention(user, channel, f.thread, "what did [1] say?")
	f.EphemeralWith(channel, user, "Follow-up questions are not enabled")
	if got := f.engine.steered(); len(got) != 0 {
		t.Errorf("a finished run was steered: %q", got)
	}
}
