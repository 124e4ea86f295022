package streams

import (
	"context"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestAssistantPanelStartsAStream: "Start a research stream" in the
// assistant panel beside a channel starts the stream's guided conversation
// in the assistant thread, for digests in that channel; a typed answer
// there moves it on (the model is asked), and is not taken as a research
// question.
func TestAssistantPanelStartsAStream(t *testing.T) {
	h := newStreamHarness(t, proposal(scheduler.StepCompetitors, scheduler.FieldCompetitors, "Acme"))
	dm := slackfake.DMChannelID(requester)
	thread, err := h.fake.StartAssistantThread(h.ctx, requester, chanIn)
	if err != nil {
		t.Fatal(err)
	}
	h.wait("the greeting", func() bool { _, ok := inThread(h.fake, dm, thread, "I research questions"); return ok })
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, blockkit.PromptStream); err != nil {
		t.Fatal(err)
	}
	h.wait("the first turn in the assistant thread", func() bool { return len(h.turns(dm, thread)) == 2 }) // greeting + turn
	convs := redisstore.NewConversations(h.rdb, "rb:", 0)
	c, _, ok, err := convs.Get(context.Background(), dm, thread)
	if err != nil || !ok || c.Spec.Channel != chanIn || c.Spec.Owner != requester {
		t.Fatalf("conversation: ok %v, err %v, channel %q, owner %q; want digests in %s", ok, err, c.Spec.Channel, c.Spec.Owner, chanIn)
	}
	if _, ok := inThread(h.fake, dm, thread, "/research stream new"); ok {
		t.Error("the how-to was posted instead of the conversation")
	}
	h.waitShown(dm, thread, 1)
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, "Watch heat pump makers"); err != nil {
		t.Fatal(err)
	}
	h.wait("the second turn", func() bool { return len(h.turns(dm, thread)) == 3 })
	if n := h.model.count(); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	if runs := len(h.engine.Runs()); runs != 0 {
		t.Errorf("%d runs started from a stream answer", runs)
	}
}
