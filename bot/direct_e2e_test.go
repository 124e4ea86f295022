package bot

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2EPrivateCheckpointsStayInTheRequestersDM: the checkpoints of a run
// whose Origin is Direct (a held digest draft) are posted in the requester's
// direct messages with the app and collapsed there; what goes wrong with a
// form about one is told there too, never in the run's channel.
func TestE2EPrivateCheckpointsStayInTheRequestersDM(t *testing.T) {
	h := newHarness(t, nil)
	h.engine.direct = true
	dm := slackfake.DMChannelID(requester)
	inDM := func(actionID string) (slackfake.Message, bool) {
		for _, m := range h.fake.Messages(dm) {
			if !m.Ephemeral && strings.Contains(raw(m), `"`+actionID+`"`) {
				return m, true
			}
		}
		return slackfake.Message{}, false
	}
	h.slash(requester, chanIn, "what is RAG?")
	var plan slackfake.Message
	h.waitFor("the plan in the DM", func() bool { var ok bool; plan, ok = inDM(blockkit.ActionApprove); return ok })
	if plan.ThreadTS != "" {
		t.Errorf("the private checkpoint is in a thread of the DM: %+v", plan)
	}
	if _, ok := h.withAction(blockkit.ActionApprove, ""); ok {
		t.Fatalf("a private checkpoint was shown in the run's channel: %s", h.dump())
	}

	// The decision collapses the DM message; the next checkpoint is there too.
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the plan collapsed in the DM", func() bool {
		for _, m := range h.fake.Messages(dm) {
			if m.TS == plan.TS {
				return !strings.Contains(raw(m), blockkit.ActionApprove)
			}
		}
		return false
	})
	var draft slackfake.Message
	h.waitFor("the draft in the DM", func() bool { var ok bool; draft, ok = inDM(blockkit.ActionReject); return ok })

	// A rejection whose decision is refused after the form closed is
	// explained in the DM, where the person is.
	h.click(requester, draft, blockkit.ActionReject)
	h.waitFor("the reject form", func() bool { return len(h.fake.Views()) == 1 })
	h.engine.mu.Lock()
	h.engine.decideErr = pipeline.ErrNotCurrent
	h.engine.mu.Unlock()
	h.submit(requester, h.fake.Views()[0], map[string]map[string]slack.BlockAction{blockkit.ReasonBlockID: {blockkit.ValueActionID: {Value: "too broad"}}})
	h.waitFor("the explanation in the DM", func() bool {
		for _, m := range h.fake.Messages(dm) {
			if strings.Contains(raw(m), "no longer current") {
				return true
			}
		}
		return false
	})
	for _, m := range h.fake.Messages(chanIn) {
		if strings.Contains(raw(m), "no longer current") {
			t.Fatalf("the explanation went to the run's channel: %s", h.dump())
		}
	}
}
