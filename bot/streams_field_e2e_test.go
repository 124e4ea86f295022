package bot_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/scheduler"
)

// fieldForm waits for the n-th field form opened (from 1) and returns it.
func (h *streamsE2E) fieldForm(n int) slack.View {
	h.t.Helper()
	var forms []slack.View
	h.waitFor("the field form", 10*time.Second, func() bool {
		forms = forms[:0]
		for _, v := range h.fake.Views() {
			if sv := v.SlackView(); sv.CallbackID == blockkit.CallbackStreamField && v.Method == "views.open" {
				forms = append(forms, sv)
			}
		}
		return len(forms) >= n
	})
	return forms[n-1]
}

// TestStreamReviewFieldEditInline (seed 003: a field edited inline at the
// review): Edit beside Keywords opens a form with the keywords, one per
// line; an emptied required field is refused in the form and nothing is
// saved; a new value closes it, the old review loses its buttons and the
// review is posted again with the value, without asking the model; Confirm
// saves it. Someone else's Edit is refused.
func TestStreamReviewFieldEditInline(t *testing.T) {
	h := newStreamsE2E(t)
	ctx := context.Background()
	spec := scheduler.Spec{
		Owner: streamOwner, Channel: streamChannel, CreatedAt: time.Now(),
		Purpose: "Track heat pump rivals", BusinessGoals: []string{"Inform pricing"}, ExpectedOutcomes: "Pricing decisions",
		Name: "Heat Pump Watch", Type: scheduler.TypeCompetitive, FocusAreas: []string{"Nordics"},
		Keywords: []string{"heat pump", "air-to-water"}, Frequency: scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "Europe/Oslo",
		Weekday: time.Monday, MonthDay: 1,
	}
	if _, err := h.svc.Create(ctx, spec, streamOwner); err != nil {
		t.Fatal(err)
	}
	h.slash(streamOwner, "stream edit Heat Pump Watch")
	var thread string
	h.waitFor("the edit thread", 10*time.Second, func() bool {
		for _, m := range h.fake.Messages(h.channel) {
			if strings.HasPrefix(m.Text, "Editing research stream") {
				thread = m.TS
				return true
			}
		}
		return false
	})
	review := h.nextTurn(thread, 0)
	editKeywords := blockkit.ActionStreamFieldEdit + string(scheduler.FieldKeywords)
	if !strings.Contains(string(review.Blocks), editKeywords) || strings.Contains(string(review.Blocks), blockkit.ActionStreamFieldEdit+`"`) {
		t.Fatalf("the review has no Edit beside Keywords: %s", review.Blocks)
	}

	h.click(streamOther, review, editKeywords)
	h.ephemeralFor(streamOther, "who is setting up this stream, can edit it here")

	h.click(streamOwner, review, editKeywords)
	form := h.fieldForm(1)
	if got := string(form.Blocks.BlockSet[0].(*slack.InputBlock).Element.(*slack.PlainTextInputBlockElement).InitialValue); got != "heat pump\nair-to-water" {
		t.Errorf("the form opens with %q, want the keywords one per line", got)
	}
	sctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	ack, err := h.fake.SubmitView(sctx, streamOwner, form, map[string]map[string]slack.BlockAction{blockkit.StreamFieldBlock: value("  ")})
	if err != nil {
		t.Fatal(err)
	}
	if va, _ := ack.ViewSubmission(); va.ResponseAction != "errors" || !strings.Contains(va.Errors[blockkit.StreamFieldBlock], "Keywords is required") {
		t.Fatalf("an emptied required field: %+v", va)
	}
	if c, _, _, _ := h.convs.Get(ctx, h.channel, thread); !slices.Equal(c.Spec.Keywords, spec.Keywords) || c.Last.Number != 1 {
		t.Fatalf("a refused edit changed the conversation: %+v", c.Spec.Keywords)
	}

	ack, err = h.fake.SubmitView(sctx, streamOwner, form, map[string]map[string]slack.BlockAction{blockkit.StreamFieldBlock: value("heat pump\nground source <!here>")})
	if err != nil {
		t.Fatal(err)
	}
	if va, _ := ack.ViewSubmission(); va.ResponseAction != "" {
		t.Fatalf("a valid edit was not taken: %+v", va)
	}
	again := h.nextTurn(thread, 1)
	s := displayed(again)
	if !strings.Contains(s, "Saved Keywords.") || !strings.Contains(s, "heat pump, ground source &lt;!here&gt;") || !strings.Contains(string(again.Blocks), editKeywords) {
		t.Fatalf("the review after the edit:\n%s", s)
	}
	msgs := h.botMessages(thread)
	if old := msgs[len(msgs)-2]; strings.Contains(string(old.Blocks), blockkit.ActionStreamFieldEdit) || !strings.Contains(displayed(old), "edited *Keywords*") {
		t.Errorf("the old review keeps its buttons or does not say what was edited:\n%s", displayed(old))
	}
	if n := len(h.convCalls()); n != 0 {
		t.Errorf("the inline edit asked the model (%d calls)", n)
	}

	h.click(streamOwner, again, blockkit.ActionStreamConfirm)
	h.waitFor("the edit saved", 10*time.Second, func() bool {
		st, err := h.svc.Show(ctx, "heat pump watch")
		return err == nil && slices.Equal(st.Spec.Keywords, []string{"heat pump", "ground source <!here>"})
	})
}
