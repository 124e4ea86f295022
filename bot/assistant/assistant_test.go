package assistant_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	viewing   = "C0VIEWING1"
	elsewhere = "C0ELSEWHE1"
	planID    = "run-1.plan"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// start runs an App with the assistant panel plugged in as the assembly
// does (no streams), and a run whose plan waits on the requester.
func start(t *testing.T) *bottest.Harness {
	t.Helper()
	engine := bottest.NewEngine()
	h := bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = engine
		c.Checkpoints.Approvers = map[string][]string{bottest.Channel: {bottest.Approver}}
		f, err := assistant.New(assistant.Config{Memory: h.Memory, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Assistant = f
	})
	h.Fake.AddChannel(viewing, "viewing", false)
	h.Fake.AddChannel(elsewhere, "elsewhere", false)
	d := checkpoints.Builtins(t0)[0]
	inst := checkpoints.Instance{ID: planID, RunID: "run-1", DefinitionID: d.ID, ControlType: d.ControlType, Label: d.Label,
		Required: d.Required, Fields: d.Fields, Actions: d.Actions, State: checkpoints.StateOffered, Payload: json.RawMessage(`{}`), CreatedAt: t0, OfferedAt: t0}
	engine.Put(&pipeline.Run{ID: "run-1", Question: "Heat pumps in the cold?", RequestedBy: bottest.Requester, Status: pipeline.StatusWaiting,
		Waiting: planID, Checkpoints: []checkpoints.Instance{inst}, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: bottest.Channel, ThreadTS: "100.000001"}, CreatedAt: t0})
	return h
}

// open opens the requester's assistant panel beside channel and waits for
// the greeting; it returns the panel's direct-message channel and thread.
func open(t *testing.T, h *bottest.Harness, user, channel string) (dm, thread string) {
	t.Helper()
	dm = slackfake.DMChannelID(user)
	thread, err := h.Fake.StartAssistantThread(h.Ctx, user, channel)
	if err != nil {
		t.Fatal(err)
	}
	h.Wait("the greeting", func() bool { _, ok := bottest.InThread(h.Fake, dm, thread, "I research questions"); return ok })
	return dm, thread
}

// TestGreetsAndFollowsTheViewedChannel: opening the panel greets the
// person with the three suggested prompts, and the channel they view is
// remembered with the thread, then follows them when they move.
func TestGreetsAndFollowsTheViewedChannel(t *testing.T) {
	h := start(t)
	dm, thread := open(t, h, bottest.Requester, viewing)
	h.Wait("the prompts", func() bool {
		th, _ := h.Fake.AssistantThreadAt(dm, thread)
		return len(th.Prompts) == 3 && len(h.Fake.Calls("assistant.threads.setSuggestedPrompts")) == 1
	})
	if got, err := bot.ViewedChannel(h.Ctx, h.Memory, dm, thread); err != nil || got != viewing {
		t.Errorf("viewed channel = %q, %v; want %s", got, err, viewing)
	}
	if err := h.Fake.ChangeAssistantContext(h.Ctx, bottest.Requester, thread, elsewhere); err != nil {
		t.Fatal(err)
	}
	h.Wait("the new viewed channel", func() bool {
		got, _ := bot.ViewedChannel(h.Ctx, h.Memory, dm, thread)
		return got == elsewhere
	})
}

// TestPromptsAreAnsweredNotResearched: each suggested prompt gets its
// answer (what waits on the person by the App's rule: the requester's
// plan for them and for the channel's approver, nothing for a stranger;
// how to start a stream without streams; how to ask), and none titles the
// thread.
func TestPromptsAreAnsweredNotResearched(t *testing.T) {
	h := start(t)
	dm, thread := open(t, h, bottest.Requester, "")
	for _, p := range []struct{ prompt, want string }{
		{blockkit.PromptPending, "Heat pumps in the cold?"},
		{blockkit.PromptStream, "/research stream new"},
		{blockkit.PromptResearch, "Type your question"},
	} {
		h.Message(bottest.Requester, dm, thread, p.prompt)
		h.Wait("the answer to "+p.prompt, func() bool { _, ok := bottest.InThread(h.Fake, dm, thread, p.want); return ok })
	}
	if n := len(h.Fake.Calls("assistant.threads.setTitle")); n != 0 {
		t.Errorf("a prompt titled the thread (%d calls)", n)
	}
	// The channel's approver is asked about the requester's plan too.
	adm, athread := open(t, h, bottest.Approver, "")
	h.Message(bottest.Approver, adm, athread, blockkit.PromptPending)
	h.Wait("the approver's pending decisions", func() bool { _, ok := bottest.InThread(h.Fake, adm, athread, "Heat pumps in the cold?"); return ok })
	// The stranger has nothing waiting on them.
	sdm, sthread := open(t, h, bottest.Stranger, "")
	h.Message(bottest.Stranger, sdm, sthread, blockkit.PromptPending)
	h.Wait("the stranger's answer", func() bool { return len(h.Fake.Thread(sdm, sthread)) >= 2 })
	if _, ok := bottest.InThread(h.Fake, sdm, sthread, "Heat pumps in the cold?"); ok {
		t.Error("the stranger was shown the requester's plan")
	}
}

// TestWithoutThePanelNothingGreets: an App without the feature does not
// answer the panel's events (as one without Slack's AI-app feature never
// gets them).
func TestWithoutThePanelNothingGreets(t *testing.T) {
	h := bottest.New(t, nil)
	dm := slackfake.DMChannelID(bottest.Requester)
	thread, err := h.Fake.StartAssistantThread(h.Ctx, bottest.Requester, "")
	if err != nil {
		t.Fatal(err)
	}
	h.Mention(bottest.Requester, bottest.Channel, "", "") // a later event, served after the panel's
	h.Wait("the mention's answer", func() bool { return len(h.Fake.Messages(bottest.Channel)) > 0 })
	if msgs := h.Fake.Thread(dm, thread); len(msgs) > 1 {
		t.Errorf("the panel was answered without the feature: %d messages", len(msgs))
	}
}

// TestNewNamesWhatIsMissing: New refuses a Config without the Sender or
// the memory, naming both.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := assistant.New(assistant.Config{})
	if err == nil || !strings.Contains(err.Error(), "a Sender") || !strings.Contains(err.Error(), "a Slack memory") {
		t.Errorf("New(empty) = %v", err)
	}
}
