package clarify_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/clarify"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	user, other, channel = bottest.Requester, bottest.Stranger, bottest.Channel
	runID                = "run-cl1"
	instID               = "run-cl1.cp-1"
)

// decideEngine is bottest's Engine whose Decide records the decision and
// closes the checkpoint, as the engine does, or fails with err when set.
type decideEngine struct {
	*bottest.Engine
	mu        sync.Mutex
	decisions []checkpoints.Decision
	err       error
}

func (e *decideEngine) Decide(ctx context.Context, id string, d checkpoints.Decision) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	e.decisions = append(e.decisions, d)
	r, err := e.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	r.Instance(id).State, r.Waiting = checkpoints.StateSubmitted, ""
	e.Put(r)
	return r, nil
}

func (e *decideEngine) decided() []checkpoints.Decision {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]checkpoints.Decision(nil), e.decisions...)
}

// fixture is the App with clarify plugged in as the assembly plugs it (and
// no steering or follow-ups), and a run waiting at its clarify checkpoint
// in Channel's thread.
type fixture struct {
	*bottest.Harness
	engine *decideEngine
	thread string
}

func newFixture(t *testing.T, decideErr error) *fixture {
	t.Helper()
	f := &fixture{engine: &decideEngine{Engine: bottest.NewEngine(), err: decideErr}}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		cl, err := clarify.New(clarify.Config{Engine: f.engine, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Clarify = cl
	})
	api := slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	_, ts, err := api.PostMessage(channel, slack.MsgOptionText("What about Rust?", false))
	if err != nil {
		t.Fatal(err)
	}
	f.thread = ts
	inst := checkpoints.Instance{ID: instID, RunID: runID, DefinitionID: checkpoints.Clarify, State: checkpoints.StateOffered,
		Fields: []checkpoints.Field{{Key: checkpoints.KeyAnswer1}, {Key: checkpoints.KeyReply}}}
	f.engine.Put(&pipeline.Run{ID: runID, Question: "What about Rust?", RequestedBy: user, Status: pipeline.StatusWaiting, Waiting: instID,
		Checkpoints: []checkpoints.Instance{inst}, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel, ThreadTS: ts}})
	if err := f.Memory.RememberRunOfThread(f.Ctx, channel, ts, runID, bot.MessageKeyTTL); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestClarifyingQuestionsAnsweredByMention: a stranger's answer is refused
// and not recorded; an empty mention asks for the answers; the requester's
// mention is the checkpoint's answer, recorded as theirs and acknowledged
// in the thread; "stop" is not an answer (passed on, here to the App's
// words, as neither steering nor follow-ups are plugged in).
func TestClarifyingQuestionsAnsweredByMention(t *testing.T) {
	f := newFixture(t, nil)

	f.Mention(other, channel, f.thread, "the language")
	f.EphemeralWith(channel, other, "can answer its questions")

	f.Mention(user, channel, f.thread, "")
	f.EphemeralWith(channel, user, "Mention me with your answers")

	f.Mention(user, channel, f.thread, "stop")
	f.EphemeralWith(channel, user, "Follow-up questions are not enabled")
	if got := f.engine.decided(); len(got) != 0 {
		t.Fatalf("decisions before the answer: %+v", got)
	}

	f.Mention(user, channel, f.thread, "the programming language, for work")
	f.Wait("the answer acknowledged in the thread", func() bool {
		for _, m := range f.Fake.Messages(channel) {
			if m.ThreadTS == f.thread && m.BotID != "" && !m.Ephemeral && strings.Contains(m.Text, "plan with your answers") {
				return true
			}
		}
		return false
	})
	got := f.engine.decided()
	if len(got) != 1 || got[0].Action != checkpoints.Edit || got[0].By != user || got[0].Values[checkpoints.KeyReply] != "the programming language, for work" {
		t.Errorf("decisions %+v, want the requester's reply as an edit", got)
	}
}

// TestClarifyAnswerNotRecorded: when the engine does not take the answer
// (the checkpoint is no longer the current one), the person is told so in
// the App's words (bot.Request.Decide) and nothing is acknowledged.
func TestClarifyAnswerNotRecorded(t *testing.T) {
	f := newFixture(t, pipeline.ErrNotCurrent)
	f.Mention(user, channel, f.thread, "the programming language")
	f.EphemeralWith(channel, user, "no longer current")
	for _, m := range f.Fake.Messages(channel) {
		if strings.Contains(m.Text, "plan with your answers") {
			t.Errorf("an answer not recorded was acknowledged: %q", m.Text)
		}
	}
}
