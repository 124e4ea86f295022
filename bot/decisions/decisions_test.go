package decisions_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/decisions"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	requester, stranger, approver, channel = bottest.Requester, bottest.Stranger, bottest.Approver, bottest.Channel
	admin                                  = "U0ADMIN01"
	runID                                  = "run-d1"
	planID                                 = "run-d1.cp1"
)

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// engine is bottest's Engine with the checkpoint calls the feature makes
// recorded: a decision is accepted, the rest answer as the test sets.
type engine struct {
	*bottest.Engine
	mu        sync.Mutex
	decided   []checkpoints.Decision
	opened    []string
	passed    []string // "skip:id", "retry:id", "continue:id"
	passedErr error
}

func (e *engine) Decide(_ context.Context, instID string, d checkpoints.Decision) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.decided = append(e.decided, d)
	return e.Engine.Load(context.Background(), pipeline.RunIDOf(instID))
}

func (e *engine) Opened(_ context.Context, instID, _ string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opened = append(e.opened, instID)
	return nil
}

func (e *engine) pass(what, instID string) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.passed = append(e.passed, what+":"+instID)
	return nil, e.passedErr
}

func (e *engine) Skip(_ context.Context, instID, _ string) (*pipeline.Run, error) {
	return e.pass("skip", instID)
}

func (e *engine) Retry(_ context.Context, instID, _ string) (*pipeline.Run, error) {
	return e.pass("retry", instID)
}

func (e *engine) ContinueWithout(_ context.Context, instID, _ string) (*pipeline.Run, error) {
	return e.pass("continue", instID)
}

// decisionsSoFar, openedSoFar and passedSoFar copy what was recorded.
func (e *engine) decisionsSoFar() []checkpoints.Decision {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]checkpoints.Decision(nil), e.decided...)
}

func (e *engine) openedSoFar() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.opened...)
}

func (e *engine) passedSoFar() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.passed...)
}

// home records the people whose Home the feature refreshed.
type home struct {
	mu    sync.Mutex
	users []string
}

func (h *home) Decided(_ context.Context, req *bot.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users = append(h.users, req.UserID)
}

func (h *home) told() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.users...)
}

// fixture is the App with the feature plugged in, a run waiting at its
// plan review, and the plan review's message in Channel as the Presenter
// posts it (blockkit.RenderCheckpoint).
type fixture struct {
	*bottest.Harness
	t      *testing.T
	engine *engine
	home   *home
	plan   slackfake.Message
}

func newFixture(t *testing.T, run func(*pipeline.Run)) *fixture {
	t.Helper()
	f := &fixture{t: t, engine: &engine{Engine: bottest.NewEngine()}, home: &home{}}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		c.Checkpoints.Approvers = map[string][]string{channel: {approver}}
		buttons, err := decisions.New(decisions.Config{Engine: f.engine, Admins: []string{admin}, Home: f.home, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Features = append(c.Features, buttons)
	})
	f.Fake.AddUser(admin, "grace", "UTC")
	d := checkpoints.Builtins(t0)[0]
	inst := checkpoints.Instance{ID: planID, RunID: runID, DefinitionID: d.ID, ControlType: d.ControlType, Label: d.Label,
		Required: d.Required, Fields: d.Fields, Actions: d.Actions, State: checkpoints.StateOffered, Payload: json.RawMessage(`{}`), CreatedAt: t0, OfferedAt: t0}
	r := &pipeline.Run{ID: runID, Question: "Heat pumps in the cold?", RequestedBy: requester, Status: pipeline.StatusWaiting,
		Waiting: planID, Checkpoints: []checkpoints.Instance{inst}, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel}, CreatedAt: t0}
	if run != nil {
		run(r)
	}
	f.engine.Put(r)
	api := slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	_, ts, err := api.PostMessageContext(f.Ctx, channel, slack.MsgOptionText("Research plan", false), slack.MsgOptionBlocks(blockkit.RenderCheckpoint(&inst, requester)...))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range f.Fake.Messages(channel) {
		if m.TS == ts {
			f.plan = m
		}
	}
	return f
}

// form waits for the n-th view opened or updated and returns it.
func (f *fixture) form(n int) slackfake.View {
	f.t.Helper()
	f.Wait("the form", func() bool { return len(f.Fake.Views()) >= n })
	return f.Fake.Views()[n-1]
}

// TestNewNamesWhatIsMissing: New refuses a Config without an engine or a
// way to reach Slack, and says which.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := decisions.New(decisions.Config{})
	if err == nil || !strings.Contains(err.Error(), "a Sender") || !strings.Contains(err.Error(), "an engine") {
		t.Errorf("New(empty) = %v", err)
	}
}

// TestApproveIsDecidedForWhoMayDecide: the requester's Approve is recorded
// as theirs; a stranger's is refused, saying who may decide, and records
// nothing.
func TestApproveIsDecidedForWhoMayDecide(t *testing.T) {
	f := newFixture(t, nil)
	f.Click(stranger, f.plan, blockkit.ActionApprove)
	f.EphemeralWith(channel, stranger, "who started this research")
	if got := f.engine.decisionsSoFar(); len(got) != 0 {
		t.Fatalf("a stranger's click decided: %+v", got)
	}
	f.Click(requester, f.plan, blockkit.ActionApprove)
	f.Wait("the decision", func() bool { return len(f.engine.decisionsSoFar()) == 1 })
	if d := f.engine.decisionsSoFar()[0]; d.Action != checkpoints.Approve || d.By != requester {
		t.Errorf("decision = %+v, want approve by the requester", d)
	}
}

// TestEditOpensTheFormAndARejectNeedsAReason: Edit opens the checkpoint's
// form on the fast path and marks it opened; Reject opens its form, whose
// submission without a reason is refused in the form and with one is
// recorded, and the person's Home is told.
func TestEditOpensTheFormAndARejectNeedsAReason(t *testing.T) {
	f := newFixture(t, nil)
	f.Click(requester, f.plan, blockkit.ActionEdit)
	if v := f.form(1); v.Method != "views.open" || !strings.Contains(string(v.JSON), `"callback_id":"`+blockkit.CallbackEdit+`"`) {
		t.Fatalf("the Edit click opened %s %s", v.Method, v.JSON)
	}
	f.Wait("the form marked opened", func() bool { return len(f.engine.openedSoFar()) == 1 })

	f.Click(requester, f.plan, blockkit.ActionReject)
	reject := f.form(2)
	if !strings.Contains(string(reject.JSON), `"callback_id":"`+blockkit.CallbackReject+`"`) {
		t.Fatalf("the Reject click opened %s", reject.JSON)
	}
	ack := f.Submit(requester, reject, bottest.Form(map[string]slack.BlockAction{blockkit.ReasonBlockID: {Value: "  "}}))
	if ack.Errors[blockkit.ReasonBlockID] == "" {
		t.Fatalf("a reject without a reason was acked %+v", ack)
	}
	if got := f.engine.decisionsSoFar(); len(got) != 0 {
		t.Fatalf("a reject without a reason decided: %+v", got)
	}
	f.Submit(requester, reject, bottest.Form(map[string]slack.BlockAction{blockkit.ReasonBlockID: {Value: "wrong question"}}))
	f.Wait("the rejection", func() bool { return len(f.engine.decisionsSoFar()) == 1 })
	if d := f.engine.decisionsSoFar()[0]; d.Action != checkpoints.Reject || d.Note != "wrong question" || d.By != requester {
		t.Errorf("decision = %+v, want the requester's rejection with its reason", d)
	}
	f.Wait("the Home told", func() bool { return len(f.home.told()) == 1 })
	if got := f.home.told(); got[0] != requester {
		t.Errorf("the Home of %v was told", got)
	}
}

// TestContinueWithoutIsForAdmins: only SLACK_ADMINS may continue without a
// checkpoint that could not be shown; Skip is for whoever may decide.
func TestContinueWithoutIsForAdmins(t *testing.T) {
	f := newFixture(t, nil)
	api := slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	inst := checkpoints.Instance{ID: planID, Label: "Research plan", Actions: []checkpoints.Action{checkpoints.Approve}}
	_, ts, err := api.PostMessageContext(f.Ctx, channel, slack.MsgOptionText("stranded", false), slack.MsgOptionBlocks(blockkit.RenderStranded(&inst)...))
	if err != nil {
		t.Fatal(err)
	}
	stranded := slackfake.Message{Channel: channel, TS: ts}
	f.Click(requester, stranded, blockkit.ActionContinueWithout)
	f.EphemeralWith(channel, requester, "Only an admin")
	f.Click(admin, stranded, blockkit.ActionContinueWithout)
	f.Wait("the admin's continue", func() bool { return len(f.engine.passedSoFar()) == 1 })
	if got := f.engine.passedSoFar(); got[0] != "continue:"+planID {
		t.Errorf("passed over %v", got)
	}
}

// TestAClickOnALostCheckpointRetiresItsMessage: a click on a checkpoint
// the run no longer has, after the store lost writes, is answered with
// where the run waits, and the clicked message says it was lost — Approve,
// and Edit and Reject, which open no form.
func TestAClickOnALostCheckpointRetiresItsMessage(t *testing.T) {
	for _, action := range []string{blockkit.ActionApprove, blockkit.ActionEdit, blockkit.ActionReject} {
		t.Run(action, func(t *testing.T) {
			f := newFixture(t, func(r *pipeline.Run) {
				r.Checkpoints[0].ID, r.Waiting = runID+".cp2", runID+".cp2"
				r.LostDecision = &pipeline.LostDecision{Checkpoint: runID + ".cp2", At: t0}
			})
			f.Click(requester, f.plan, action)
			f.Wait("the clicked message retired", func() bool {
				for _, m := range f.Fake.Messages(channel) {
					if m.TS == f.plan.TS {
						return !strings.Contains(string(m.Blocks), blockkit.ActionApprove)
					}
				}
				return false
			})
			if got := f.engine.decisionsSoFar(); len(got) != 0 {
				t.Errorf("a click on a lost checkpoint decided: %+v", got)
			}
		})
	}
}
