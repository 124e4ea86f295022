package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
)

// TestE2EAClickAdoptsACheckpointMessageNothingRemembered: the process that
// posted the plan died before it remembered where (posting and remembering
// are two steps; the soak's SIGKILLs meet that window). The person clicks
// Approve on the orphan message. The click names the message, so the
// decision collapses it — no separate record is posted beside a message
// that still offers buttons.
func TestE2EAClickAdoptsACheckpointMessageNothingRemembered(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	inst := buttonValue(plan, blockkit.ActionApprove)
	h.afterOfferRemembered(plan, blockkit.ActionApprove)
	// What a kill between the post and its record leaves: the message, and
	// nothing remembered of it.
	if n, err := h.rdb.Del(h.ctx, "rb:slack:cp:"+inst).Result(); err != nil || n != 1 {
		t.Fatalf("forgetting the plan's message: deleted %d keys, err %v", n, err)
	}
	posts := len(h.fake.Calls("chat.postMessage"))
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.ClickButton(ctx, requester, plan.Channel, plan.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the orphan plan message to collapse", func() bool {
		m := h.message(plan.TS)
		return !strings.Contains(raw(m), blockkit.ActionApprove) && strings.Contains(raw(m), "approved by <@"+requester+">")
	})
	h.stop()
	for _, c := range h.fake.Calls("chat.postMessage")[posts:] {
		if strings.Contains(c.Params["text"], ": decided") {
			t.Errorf("a separate decision record was posted: %q", c.Params["text"])
		}
	}
}
