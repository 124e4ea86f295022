package bot

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// The offer to share a report from the assistant panel, which the
// Presenter posts under it; sharing is the feature bot/share.

// assistantReport runs a research in an assistant thread opened beside
// viewing, with the sources finishing gives it (nil: none), to its report,
// and returns the thread and the share offer posted under the report.
func assistantReport(t *testing.T, h *harness, viewing string, finishing func(r *pipeline.Run)) (dm, thread string, offer slackfake.Message) {
	t.Helper()
	h.engine.mu.Lock()
	h.engine.finishing = finishing
	h.engine.mu.Unlock()
	dm = slackfake.DMChannelID(requester)
	thread, err := h.fake.StartAssistantThread(h.ctx, requester, viewing)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the greeting", func() bool { _, ok := inThread(h.fake, dm, thread, "I research questions"); return ok })
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, "How do RAG systems handle stale sources?"); err != nil {
		t.Fatal(err)
	}
	var plan, draft slackfake.Message
	h.waitFor("the plan", func() bool {
		var ok bool
		plan, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Research plan")
		return ok
	})
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the draft", func() bool {
		var ok bool
		draft, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Draft review")
		return ok
	})
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report and the share offer", func() bool {
		var ok bool
		offer, ok = inThread(h.fake, dm, thread, blockkit.ActionShareOther)
		return ok
	})
	return dm, thread, offer
}

// TestE2EShareOfferNamesTheViewedChannel: under a report finished in an
// assistant thread, the Presenter offers to share it to the channel the
// person was viewing beside the panel, and to choose another (the clicks
// are bot/share's, tested there).
func TestE2EShareOfferNamesTheViewedChannel(t *testing.T) {
	h := newHarness(t, nil)
	_, _, offer := assistantReport(t, h, chanIn, nil)
	if buttonValue(offer, blockkit.ActionShare) != blockkit.ShareValue("run-1", chanIn) || !strings.Contains(raw(offer), "<#"+chanIn+">") {
		t.Fatalf("the offer does not name the viewed channel: %s", raw(offer))
	}
	if buttonValue(offer, blockkit.ActionShareOther) != "run-1" {
		t.Errorf("the offer's other button = %s", raw(offer))
	}
}

// TestE2EShareOfferOnlyInAssistantThread: a report in a channel thread
// (already read by the channel) carries no share offer.
func TestE2EShareOfferOnlyInAssistantThread(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("How do RAG systems handle stale sources?")
	h.click(requester, plan, blockkit.ActionApprove)
	var draft slackfake.Message
	h.waitFor("the draft", func() bool {
		var ok bool
		draft, ok = h.withAction(blockkit.ActionApprove, "Draft review")
		return ok
	})
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report and its file", func() bool {
		return h.threadHas("RAG and stale sources") && len(h.fake.Files()) == 1 && h.fake.Files()[0].Completed
	})
	h.waitFor("the run shown to its end", func() bool {
		f, _ := h.cfg.Memory.FinalPost(h.ctx, "run-1")
		return f[finalDone] == "1"
	})
	for _, m := range h.fake.Messages(chanIn) {
		if strings.Contains(raw(m), blockkit.ActionShareOther) {
			t.Errorf("a share offer in a channel thread: %s", raw(m))
		}
	}
}
