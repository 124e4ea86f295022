package streams

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestStreamConversationRefusals: a Skip on a required field is refused with
// a clear message, the model being down is explained, and nothing moves.
func TestStreamConversationRefusals(t *testing.T) {
	h := newStreamHarness(t,
		proposal(scheduler.StepCompetitors, scheduler.FieldCompetitors, "Acme", "Globex"),
		proposal(scheduler.StepKeywords, scheduler.FieldKeywords, "heat pump", "COP"),
		nil, // the model is down
	)
	thread, _ := h.start(requester, chanIn)
	h.reply(requester, chanIn, thread, "Watch heat pump makers")
	h.wait("the competitors turn", func() bool { return len(h.turns(chanIn, thread)) == 2 })
	competitors := h.turns(chanIn, thread)[1]
	if !strings.Contains(string(competitors.Blocks), blockkit.ActionStreamSkip) {
		t.Fatalf("no Skip on an optional field: %s", competitors.Blocks)
	}
	// A typed answer moves on to keywords (required): no Skip there.
	h.waitShown(chanIn, thread, 1)
	h.reply(requester, chanIn, thread, "No competitors yet, let's do keywords")
	h.wait("the keywords turn", func() bool { return len(h.turns(chanIn, thread)) == 3 })
	if kw := h.turns(chanIn, thread)[2]; strings.Contains(string(kw.Blocks), blockkit.ActionStreamSkip) {
		t.Errorf("Skip offered on a required field: %s", kw.Blocks)
	}
	// The competitors turn was answered by typing: its buttons are gone, so
	// its Skip cannot be clicked on the current, required step.
	h.wait("the competitors turn collapsed", func() bool {
		b := string(h.turns(chanIn, thread)[1].Blocks)
		return !strings.Contains(b, blockkit.ActionStreamSkip) && strings.Contains(b, "answered")
	})
	if n := h.model.count(); n != 2 {
		t.Errorf("a refused skip called the model (%d calls)", n)
	}
	h.waitShown(chanIn, thread, 2)
	// The model is down: said so, and the conversation stays where it was.
	h.reply(requester, chanIn, thread, "heat pump, COP")
	h.ephemeralWith(chanIn, requester, "the language model did not answer")
	h.stop() // finishes the work in flight: nothing more can be posted after this
	if n := len(h.turns(chanIn, thread)); n != 3 {
		t.Errorf("%d turns after the model failed, want 3", n)
	}
	c, _, ok, err := redisstore.NewConversations(h.rdb, "rb:", 0).Get(context.Background(), chanIn, thread)
	if err != nil || !ok || c.Step != scheduler.StepKeywords || c.IsSettled(scheduler.FieldKeywords) {
		t.Errorf("stored conversation: step %s, ok %v, err %v", c.Step, ok, err)
	}
}

// TestStreamConversationInDM: started in a DM, the conversation happens there.
func TestStreamConversationInDM(t *testing.T) {
	h := newStreamHarness(t, proposal(scheduler.StepCompetitors, scheduler.FieldCompetitors, "Acme"))
	dm := slackfake.DMChannelID(requester)
	thread, first := h.start(requester, dm)
	if first.Channel != dm {
		t.Fatalf("first turn in %s", first.Channel)
	}
	h.reply(requester, dm, thread, "Watch heat pumps")
	h.wait("the second turn", func() bool { return len(h.turns(dm, thread)) == 2 })
	c, _, ok, _ := redisstore.NewConversations(h.rdb, "rb:", 0).Get(context.Background(), dm, thread)
	if !ok || c.Spec.Channel != dm || c.Spec.TimeZone != "Europe/Paris" {
		t.Errorf("DM conversation: ok %v channel %q tz %q", ok, c.Spec.Channel, c.Spec.TimeZone)
	}
}

// TestStreamCommandsPermissions: only the owner or a workspace admin may
// change a stream; others get a clear ephemeral answer and nothing changes.
func TestStreamCommandsPermissions(t *testing.T) {
	h := newStreamHarness(t)
	ctx := context.Background()
	if _, err := h.svc.Create(ctx, testSpec(), requester); err != nil {
		t.Fatal(err)
	}
	// approver is a workspace admin according to users.info.
	h.fake.OnCall(func(c slackfake.Call) *slackfake.Reply {
		if c.Method == "users.info" && c.Params["user"] == approver {
			return &slackfake.Reply{Body: map[string]any{"ok": true, "user": map[string]any{"id": approver, "name": "cy", "tz": "UTC", "is_admin": true}}}
		}
		return nil
	})

	h.slash(stranger, chanIn, "stream pause pumps")
	h.ephemeralWith(chanIn, stranger, "who owns the stream")
	h.slash(stranger, chanIn, "stream run Pumps")
	h.ephemeralWith(chanIn, stranger, "or a workspace admin can run it")
	h.slash(stranger, chanIn, "stream delete Pumps")
	h.ephemeralWith(chanIn, stranger, "or a workspace admin can delete it")
	if st, _ := h.svc.Show(ctx, "Pumps"); st.Paused || len(h.runner.requests()) != 0 {
		t.Fatalf("a stranger changed the stream: paused %v, runs %d", st.Paused, len(h.runner.requests()))
	}

	h.slash(approver, chanIn, "stream pause Pumps")
	h.ephemeralWith(chanIn, approver, "Paused")
	if st, _ := h.svc.Show(ctx, "Pumps"); !st.Paused {
		t.Error("an admin could not pause")
	}
	h.slash(requester, chanIn, "stream resume Pumps")
	h.ephemeralWith(chanIn, requester, "Resumed")
	h.slash(requester, chanIn, "stream policy Pumps hold_draft")
	h.ephemeralWith(chanIn, requester, "Policy set to `hold_draft`")
	h.slash(requester, chanIn, "stream policy")
	h.ephemeralWith(chanIn, requester, "Which stream?")
	if st, _ := h.svc.Show(ctx, "Pumps"); st.Paused || st.Policy != scheduler.PolicyHoldDraft {
		t.Errorf("after resume and policy: paused %v policy %s", st.Paused, st.Policy)
	}
	h.slash(requester, chanIn, "stream run Pumps")
	h.ephemeralWith(chanIn, requester, "Started a digest of")
	if reqs := h.runner.requests(); len(reqs) != 1 || reqs[0].Origin.Channel != chanIn || reqs[0].Origin.ThreadTS != "" || reqs[0].Origin.Kind != scheduler.OriginKind {
		t.Errorf("run now started %+v", reqs)
	}
	h.slash(requester, chanIn, "stream run Pumps")
	h.ephemeralWith(chanIn, requester, "is still running")

	h.slash(requester, chanIn, "stream show nothing-here")
	h.ephemeralWith(chanIn, requester, "There is no research stream called")
	// Only a subcommand's exact form is one; anything else is a question.
	h.slash(requester, chanIn, "stream processing frameworks compared")
	h.wait("the question researched", func() bool {
		for _, m := range h.fake.Messages(chanIn) {
			if !m.Ephemeral && m.Text == "Research request: stream processing frameworks compared" {
				return true
			}
		}
		return false
	})
	h.slash(requester, chanIn, "stream")
	h.ephemeralWith(chanIn, requester, "Research streams")
	h.slash(requester, chanIn, "stream pause")
	h.ephemeralWith(chanIn, requester, "Which stream?")

	// delete: Keep it changes nothing; a stranger cannot use the owner's buttons.
	h.slash(requester, chanIn, "stream delete Pumps")
	confirm := h.ephemeralWith(chanIn, requester, "Delete the research stream")
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, confirm.TS, blockkit.ActionStreamDeleteAbort, "", ""); err != nil {
		t.Fatal(err)
	}
	h.ephemeralWith(chanIn, requester, "the stream stays")
	if _, err := h.svc.Show(ctx, "Pumps"); err != nil {
		t.Fatalf("Keep it deleted the stream: %v", err)
	}
}

// TestStreamConfirmNameTaken: when the name is taken at Confirm, nothing is
// created, the user is told to change the name, and the review stays open;
// Change then returns to the conversation.
func TestStreamConfirmNameTaken(t *testing.T) {
	val := func(f scheduler.SpecField, v string) scheduler.FieldValue {
		return scheduler.FieldValue{Field: f, Value: v, Values: []string{}}
	}
	list := func(f scheduler.SpecField, v ...string) scheduler.FieldValue {
		return scheduler.FieldValue{Field: f, Values: v}
	}
	all := &scheduler.Proposal{Mode: scheduler.ModeQuestion, Message: "Here it is.", Suggestions: []string{}, Options: []string{},
		ExtractedData: []scheduler.FieldValue{
			val(scheduler.FieldPurpose, "Follow heat pumps"), list(scheduler.FieldBusinessGoals, "Plan"),
			val(scheduler.FieldExpectedOutcomes, "Decisions"), val(scheduler.FieldStreamName, "pumps"),
			val(scheduler.FieldStreamType, "market"), list(scheduler.FieldFocusAreas, "Cold climates"),
			list(scheduler.FieldKeywords, "heat pump"), val(scheduler.FieldReportFrequency, "monthly"),
		},
		NextStep: scheduler.StepReview}
	h := newStreamHarness(t, all)
	ctx := context.Background()
	if _, err := h.svc.Create(ctx, testSpec(), stranger); err != nil {
		t.Fatal(err)
	}
	thread, _ := h.start(requester, chanIn)
	h.reply(requester, chanIn, thread, "Everything at once, monthly, call it pumps")
	h.wait("the review", func() bool { return len(h.turns(chanIn, thread)) == 2 })
	review := h.turns(chanIn, thread)[1]
	if !strings.Contains(string(review.Blocks), "monthly on day 1") {
		t.Errorf("review lacks the monthly schedule: %s", review.Blocks)
	}
	h.waitShown(chanIn, thread, 1)
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, review.TS, blockkit.ActionStreamConfirm, "", ""); err != nil {
		t.Fatal(err)
	}
	h.wait("the refusal", func() bool {
		ts := h.turns(chanIn, thread)
		return len(ts) == 3 && strings.Contains(string(ts[2].Blocks), "already exists")
	})
	all2, _ := h.svc.List(ctx)
	if len(all2) != 1 || all2[0].Owner != stranger {
		t.Fatalf("streams after a refused create: %d", len(all2))
	}
	c, _, _, _ := redisstore.NewConversations(h.rdb, "rb:", 0).Get(ctx, chanIn, thread)
	if c.Step != scheduler.StepReview {
		t.Fatalf("after the refusal the conversation is at %s, want review", c.Step)
	}
	// The review's buttons still work: Change goes back to the conversation.
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, review.TS, blockkit.ActionStreamChange, "", ""); err != nil {
		t.Fatal(err)
	}
	h.wait("the change turn", func() bool {
		ts := h.turns(chanIn, thread)
		return len(ts) == 4 && strings.Contains(string(ts[3].Blocks), "What would you like to change")
	})
	if n := h.model.count(); n != 1 {
		t.Errorf("Confirm or Change called the model: %d calls", n)
	}
}

// TestStreamStaleDeleteConfirm: a delete confirmation names the stream by id:
// confirmed after the stream was deleted and a new one took its name, it is
// refused and the new stream stays. A confirmation without an id (an older
// message) is refused too.
func TestStreamStaleDeleteConfirm(t *testing.T) {
	h := newStreamHarness(t)
	ctx := context.Background()
	if _, err := h.svc.Create(ctx, testSpec(), requester); err != nil {
		t.Fatal(err)
	}
	h.slash(requester, chanIn, "stream delete Pumps")
	old := h.ephemeralWith(chanIn, requester, "Delete the research stream")
	if _, err := h.svc.Delete(ctx, "Pumps", requester, false); err != nil {
		t.Fatal(err)
	}
	fresh, err := h.svc.Create(ctx, testSpec(), requester)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, old.TS, blockkit.ActionStreamDeleteConfirm, "", ""); err != nil {
		t.Fatal(err)
	}
	h.ephemeralWith(chanIn, requester, "no longer exists, so nothing was changed")
	if st, err := h.svc.Show(ctx, "Pumps"); err != nil || st.ID != fresh.ID {
		t.Fatalf("a stale confirmation deleted the new stream: %v", err)
	}
	// An unnumbered confirmation (the name alone) is refused.
	h.slash(requester, chanIn, "stream delete Pumps")
	confirm := h.ephemeralWith(chanIn, requester, "Delete the research stream")
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, confirm.TS, blockkit.ActionStreamDeleteConfirm, "Pumps", ""); err != nil {
		t.Fatal(err)
	}
	h.ephemeralWith(chanIn, requester, "out of date")
	if _, err := h.svc.Show(ctx, "Pumps"); err != nil {
		t.Fatalf("an out-of-date confirmation deleted the stream: %v", err)
	}
	// The current confirmation deletes it.
	h.slash(requester, chanIn, "stream delete Pumps")
	// (The earlier confirmations were replaced by their answers.)
	current := h.ephemeralWith(chanIn, requester, "Delete the research stream")
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, current.TS, blockkit.ActionStreamDeleteConfirm, "", ""); err != nil {
		t.Fatal(err)
	}
	h.wait("the deletion", func() bool {
		_, err := h.svc.Show(ctx, "Pumps")
		return errors.Is(err, scheduler.ErrStreamNotFound)
	})
}

// TestStreamCommandArgsUnescaped: Slack sends "&" as "&amp;"; the stream
// called "R&D <lab>" is found by the name as typed.
func TestStreamCommandArgsUnescaped(t *testing.T) {
	h := newStreamHarness(t)
	ctx := context.Background()
	spec := testSpec()
	spec.Name = "R&D <lab>"
	if _, err := h.svc.Create(ctx, spec, requester); err != nil {
		t.Fatal(err)
	}
	h.slash(requester, chanIn, "stream pause R&amp;D &lt;lab&gt;")
	h.ephemeralWith(chanIn, requester, "Paused")
	if st, err := h.svc.Show(ctx, "R&D <lab>"); err != nil || !st.Paused {
		t.Fatalf("the escaped name did not reach the stream: %v", err)
	}
}

// laggingConversations is the conversation store; once armed, its next Get
// answers with the conversation as it was before its latest update: what a
// reader saw an instant before that update was stored.
type laggingConversations struct {
	ConversationStore
	mu     sync.Mutex
	armed  bool
	before scheduler.Conversation
	ver    int64
}

func (l *laggingConversations) Update(ctx context.Context, channel, thread string, version int64, c scheduler.Conversation) (int64, bool, error) {
	old, ov, _, err := l.ConversationStore.Get(ctx, channel, thread)
	if err != nil {
		return 0, false, err
	}
	nv, ok, err := l.ConversationStore.Update(ctx, channel, thread, version, c)
	if ok {
		l.mu.Lock()
		l.before, l.ver = old, ov
		l.mu.Unlock()
	}
	return nv, ok, err
}

func (l *laggingConversations) Get(ctx context.Context, channel, thread string) (scheduler.Conversation, int64, bool, error) {
	l.mu.Lock()
	armed := l.armed
	l.armed = false
	before, ver := l.before, l.ver
	l.mu.Unlock()
	if armed {
		return before, ver, true, nil
	}
	return l.ConversationStore.Get(ctx, channel, thread)
}

func (l *laggingConversations) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = true
}

// TestStreamAnswerTypedAsTheTurnIsRememberedIsApplied: a person answers a
// turn by typing while the bot is still storing which message shows that
// turn (the answer was read before that write). The answer is applied, not
// refused as a concurrent one, and the answered turn's buttons go.
func TestStreamAnswerTypedAsTheTurnIsRememberedIsApplied(t *testing.T) {
	lag := &laggingConversations{}
	h := newStreamHarnessWith(t, func(c ConversationStore) ConversationStore { lag.ConversationStore = c; return lag },
		proposal(scheduler.StepCompetitors, scheduler.FieldCompetitors, "Acme", "Globex"))
	thread, _ := h.start(requester, chanIn) // the first turn is shown and remembered
	lag.arm()                               // the answer reads the conversation as before that
	h.reply(requester, chanIn, thread, "Watch heat pump makers")
	h.wait("the competitors turn", func() bool { return len(h.turns(chanIn, thread)) == 2 })
	h.wait("the first turn collapsed", func() bool {
		b := string(h.turns(chanIn, thread)[0].Blocks)
		return strings.Contains(b, "answered") && !strings.Contains(b, blockkit.ActionStreamSkip)
	})
	h.stop()
	for _, m := range h.fake.Messages(chanIn) {
		if m.Ephemeral && strings.Contains(string(m.Blocks)+m.Text, "not applied") {
			t.Errorf("the answer was refused: %s", m.Text)
		}
	}
}
