package followups_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/followups"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	user, channel = bottest.Requester, bottest.Channel
	runID         = "run-fu1"
	// unknown in a question makes askEngine say the sources don't answer it.
	unknown = "night noise"
)

// askEngine is bottest's Engine whose Ask records a follow-up on the run,
// answered unless the question mentions unknown, and whose Start links a
// follow-up's run to its parent both ways, as the engine does.
type askEngine struct {
	*bottest.Engine
	mu   sync.Mutex
	asks []string
}

func (e *askEngine) Ask(ctx context.Context, id, question, by string) (*pipeline.Run, pipeline.FollowUp, error) {
	e.mu.Lock()
	e.asks = append(e.asks, by+": "+question)
	e.mu.Unlock()
	r, err := e.Load(ctx, id)
	if err != nil {
		return nil, pipeline.FollowUp{}, err
	}
	f := pipeline.FollowUp{ID: fmt.Sprintf("%s.f%d", id, len(r.FollowUps)+1), Question: question, By: by, Answered: !strings.Contains(question, unknown)}
	if f.Answered {
		f.Answer = "It works at -20 °C [1]."
	} else {
		f.Missing = "The sources say nothing of noise at night."
	}
	r.FollowUps = append(r.FollowUps, f)
	e.Put(r)
	return r, f, nil
}

func (e *askEngine) Start(ctx context.Context, req pipeline.Request) (*pipeline.Run, error) {
	r, err := e.Engine.Start(ctx, req)
	if err != nil || req.FollowUpOf == "" {
		return r, err
	}
	parent, err := e.Load(ctx, pipeline.FollowUpRun(req.FollowUpOf))
	if err != nil {
		return nil, err
	}
	parent.FollowUpByID(req.FollowUpOf).Child = r.ID
	e.Put(parent)
	r.Parent = parent.ID
	e.Put(r)
	return r, nil
}

func (e *askEngine) asked() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.asks...)
}

// fixture is the App with follow-ups plugged in as the assembly plugs them,
// and a finished run with a report in Channel's thread.
type fixture struct {
	*bottest.Harness
	engine *askEngine
	thread string
}

func newFixture(t *testing.T, limit bot.Limit) *fixture {
	t.Helper()
	f := &fixture{engine: &askEngine{Engine: bottest.NewEngine()}}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		fu, err := followups.New(followups.Config{Engine: f.engine, Budget: c.Budget, Limit: limit, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.FollowUps, c.Features = fu, append(c.Features, fu)
	})
	api := slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	_, ts, err := api.PostMessage(channel, slack.MsgOptionText("Heat pumps in cold climates", false))
	if err != nil {
		t.Fatal(err)
	}
	f.thread = ts
	rep := &pipeline.Report{Title: "Heat pumps in cold climates", Status: "complete", Abstract: "They work.", Markdown: "# Heat pumps", Metadata: pipeline.Metadata{RunID: runID}}
	f.engine.Put(&pipeline.Run{ID: runID, Question: "How well do heat pumps work in cold climates?", RequestedBy: user, Status: pipeline.StatusCompleted,
		Report: rep, Mode: "auto", Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel, ThreadTS: ts}})
	if err := f.Memory.RememberRunOfThread(f.Ctx, channel, ts, runID, bot.MessageKeyTTL); err != nil {
		t.Fatal(err)
	}
	return f
}

// inThread waits for a message of the bot in thread whose blocks or text
// contain text, and returns it.
func (f *fixture) inThread(thread, text string) slackfake.Message {
	var found slackfake.Message
	f.Wait("a message in the thread with "+text, func() bool {
		for _, m := range f.Fake.Messages(channel) {
			if m.ThreadTS == thread && m.BotID != "" && !m.Ephemeral && strings.Contains(string(m.Blocks)+m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// TestFollowUpQuestions: a question in a finished run's thread is answered
// there from its sources; one they do not answer offers "Research this",
// whose click starts a run linked both ways and replaces the button; a
// question over the per-person limit is refused, not asked, and counted.
func TestFollowUpQuestions(t *testing.T) {
	f := newFixture(t, bot.Limit{Rate: 2, Period: time.Hour})

	f.Mention(user, channel, f.thread, "")
	f.EphemeralWith(channel, user, "Ask me a question about this report")

	f.Mention(user, channel, f.thread, "what did [1] say about the cold?")
	f.inThread(f.thread, "It works at -20")
	if n := bottest.CounterValue(t, f.Metrics, "researchbot_follow_ups_total", "answered"); n != 1 {
		t.Errorf("answered follow-ups counted %v, want 1", n)
	}

	f.Mention(user, channel, f.thread, "how much "+unknown+" do they make?")
	offer := f.inThread(f.thread, `"`+blockkit.ActionResearchFollowUp+`"`)
	if !strings.Contains(string(offer.Blocks), "don't answer this") {
		t.Errorf("the unanswered follow-up does not say so:\n%s", offer.Blocks)
	}
	f.Click(user, offer, blockkit.ActionResearchFollowUp)
	f.Wait("the button replaced by the new run", func() bool {
		for _, m := range f.Fake.Messages(channel) {
			if m.TS == offer.TS && strings.Contains(string(m.Blocks), "Being researched as run") && !strings.Contains(string(m.Blocks), blockkit.ActionResearchFollowUp) {
				return true
			}
		}
		return false
	})
	var child *pipeline.Run
	for _, r := range f.engine.Runs() {
		if r.Parent == runID {
			child = r
		}
	}
	if child == nil || !strings.Contains(child.Question, unknown) || child.RequestedBy != user || child.Origin.Channel != channel {
		t.Fatalf("the follow-up's run: %+v", child)
	}
	f.inThread(f.thread, child.ID) // named in the parent's thread (the App's)

	f.Mention(user, channel, f.thread, "and what about the costs?")
	f.EphemeralWith(channel, user, "as many follow-up questions as allowed (2 per hour)")
	if got := f.engine.asked(); len(got) != 2 {
		t.Errorf("questions asked of the engine %q, want the 2 within the limit", got)
	}
	if n := bottest.CounterValue(t, f.Metrics, "researchbot_requests_rate_limited_total", "follow_up"); n != 1 {
		t.Errorf("follow-up refusals counted %v, want 1", n)
	}
}

// TestNoFollowUpsWithoutTheFeature: without follow-ups plugged in, a
// question in a finished run's thread is answered that they are not
// enabled (the App's words).
func TestNoFollowUpsWithoutTheFeature(t *testing.T) {
	h := bottest.New(t, nil)
	api := slack.New(h.Fake.BotToken(), slack.OptionAPIURL(h.Fake.APIURL()))
	_, ts, err := api.PostMessage(channel, slack.MsgOptionText("Heat pumps", false))
	if err != nil {
		t.Fatal(err)
	}
	h.Engine.(*bottest.Engine).Put(&pipeline.Run{ID: runID, RequestedBy: user, Status: pipeline.StatusCompleted, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel, ThreadTS: ts}})
	if err := h.Memory.RememberRunOfThread(h.Ctx, channel, ts, runID, bot.MessageKeyTTL); err != nil {
		t.Fatal(err)
	}
	h.Mention(user, channel, ts, "what did [1] say?")
	h.EphemeralWith(channel, user, "Follow-up questions are not enabled")
}
