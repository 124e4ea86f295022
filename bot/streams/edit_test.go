package streams

import (
	"context"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/scheduler"
)

// TestStreamEditThroughSlack: "/research stream edit NAME" opens a thread
// at the review with the stream's current values; the owner types a change
// by mentioning the bot, which takes the review's buttons away (answered by
// typing) and shows the review again with the change; Confirm saves it.
// Someone else may not edit the stream.
func TestStreamEditThroughSlack(t *testing.T) {
	change := &scheduler.Proposal{Mode: scheduler.ModeQuestion, Message: "Moved to 15:00.", Suggestions: []string{}, Options: []string{},
		ExtractedData: []scheduler.FieldValue{{Field: scheduler.FieldTimeOfDay, Value: "15:00", Values: []string{}}},
		NextStep:      scheduler.StepReview}
	h := newStreamHarness(t, change)
	ctx := context.Background()
	st, err := h.svc.Create(ctx, testSpec(), requester)
	if err != nil {
		t.Fatal(err)
	}
	h.slash(stranger, chanIn, "stream edit Pumps")
	h.ephemeralWith(chanIn, stranger, "Only")

	h.slash(requester, chanIn, "stream edit pumps")
	var thread string
	h.wait("the edit thread", func() bool {
		for _, m := range h.fake.Messages(chanIn) {
			if strings.HasPrefix(m.Text, "Editing research stream") {
				thread = m.TS
				return len(h.turns(chanIn, thread)) == 1
			}
		}
		return false
	})
	review := h.turns(chanIn, thread)[0]
	if b := string(review.Blocks); !strings.Contains(b, blockkit.ActionStreamConfirm) || !strings.Contains(b, "09:00") || !strings.Contains(b, "Follow heat pumps") {
		t.Fatalf("the edit does not open at the review with the current values: %s", b)
	}
	h.waitShown(chanIn, thread, 0)
	h.reply(requester, chanIn, thread, "make it 15:00")
	h.wait("the new review", func() bool { return len(h.turns(chanIn, thread)) == 2 })
	h.wait("the first review collapsed", func() bool {
		b := string(h.turns(chanIn, thread)[0].Blocks)
		return !strings.Contains(b, blockkit.ActionStreamConfirm) && strings.Contains(b, "answered")
	})
	second := h.turns(chanIn, thread)[1]
	if !strings.Contains(string(second.Blocks), "15:00") {
		t.Fatalf("the review does not show the change: %s", second.Blocks)
	}
	h.waitShown(chanIn, thread, 1)
	if _, err := h.fake.ClickButton(ctx, requester, chanIn, second.TS, blockkit.ActionStreamConfirm, "", ""); err != nil {
		t.Fatal(err)
	}
	h.wait("the saved notice", func() bool {
		ts := h.turns(chanIn, thread)
		return len(ts) == 3 && strings.Contains(string(ts[2].Blocks), "Saved the changes")
	})
	got, err := h.svc.Show(ctx, "Pumps")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != st.ID || got.Spec.TimeOfDay != "15:00" || got.Owner != requester || got.Spec.Purpose != "Follow heat pumps" {
		t.Errorf("after the edit: %+v", got.Spec)
	}
	all, _ := h.svc.List(ctx)
	if len(all) != 1 {
		t.Errorf("the edit created a stream: %d streams", len(all))
	}
}

// TestStreamShowOffersEdit: "stream show" has an Edit button naming the stream.
func TestStreamShowOffersEdit(t *testing.T) {
	st := &scheduler.Stream{ID: "s-1", Spec: testSpec()}
	b := rawJSON(blockkit.RenderStreamShow(st))
	if !strings.Contains(string(b), `"action_id":"`+blockkit.ActionStreamEdit+`","value":"s-1|Pumps"`) {
		t.Errorf("no Edit button: %s", b)
	}
}
