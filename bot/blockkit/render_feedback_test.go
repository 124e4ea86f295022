package blockkit

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// feedbackReport is a complete report of run r-1.
func feedbackReport() *pipeline.Report {
	rep := followUpReport()
	rep.Status, rep.Confidence = "complete", "high"
	rep.Metadata = pipeline.Metadata{RunID: "r-1", SourcesUsed: 2, WordCount: 1200, CostUSD: 0.42}
	rep.Abstract = "Heat pumps work below freezing [1]; costs are high [2]."
	return rep
}

// TestGoldenNativeFeedback: a report, a digest and a follow-up answer end
// with Slack's native feedback_buttons element in a context_actions block,
// and none carries the old custom buttons.
func TestGoldenNativeFeedback(t *testing.T) {
	rep := feedbackReport()
	digest := feedbackReport()
	digest.Title, digest.NothingNew = "Heat pumps — weekly digest", true
	digest.Metadata.RunID = "r-digest"
	answer := pipeline.FollowUp{
		ID: "r-1.f1", Question: "What did [1] say about defrost?", By: "U1", At: time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC),
		Answered: true, CostUSD: 0.0123, Answer: "Defrost runs about five minutes an hour [1].",
		Claims: []pipeline.Claim{{Ref: 1, SourceID: 1, Sentence: "Defrost runs about five minutes an hour [1].", Status: pipeline.ClaimVerified}},
	}
	cases := map[string]struct {
		blocks []slack.Block
		want   Feedback
	}{
		"feedback_report": {RenderReport(rep, nil), Feedback{RunID: "r-1"}},
		"feedback_digest": {RenderFinished(&pipeline.Run{ID: "r-digest", Status: pipeline.StatusCompleted, Report: digest,
			Origin: pipeline.Origin{Channel: "C1", Kind: "stream"}}), Feedback{RunID: "r-digest"}},
		"feedback_followup": {RenderFollowUp(rep, answer), Feedback{RunID: "r-1", On: "r-1.f1"}},
	}
	for name, c := range cases {
		golden(t, name, msg(c.blocks))
		last, ok := c.blocks[len(c.blocks)-1].(*slack.ContextActionsBlock)
		if !ok {
			t.Fatalf("%s: the last block is %T, not context_actions", name, c.blocks[len(c.blocks)-1])
		}
		checkFeedbackLimits(t, name, last, c.want)
		if s := string(rawJSON(c.blocks)); strings.Contains(s, ActionUseful) || strings.Contains(s, ActionNotUseful) {
			t.Errorf("%s still renders the old buttons", name)
		}
	}
}

// checkFeedbackLimits checks the block against Slack's documented limits
// and its buttons' values against what they stand for.
func checkFeedbackLimits(t *testing.T, name string, b *slack.ContextActionsBlock, want Feedback) {
	t.Helper()
	if n := len(b.Elements.ElementSet); n < 1 || n > MaxContextActions {
		t.Errorf("%s: %d elements in context_actions", name, n)
	}
	fb, ok := b.Elements.ElementSet[0].(*slack.FeedbackButtonsBlockElement)
	if !ok || fb.ActionID != ActionFeedback || fb.Type != slack.METFeedbackButtons {
		t.Fatalf("%s: element %#v", name, b.Elements.ElementSet[0])
	}
	for i, btn := range []*slack.FeedbackButton{fb.PositiveButton, fb.NegativeButton} {
		if btn == nil || btn.Text == nil || btn.Text.Type != slack.PlainTextType || btn.Text.Text == "" {
			t.Fatalf("%s: button %d has no plain_text text", name, i)
		}
		if utf8.RuneCountInString(btn.Text.Text) > MaxFeedbackButtonText || utf8.RuneCountInString(btn.AccessibilityLabel) > MaxFeedbackLabel ||
			btn.Value == "" || len(btn.Value) > MaxFeedbackValue {
			t.Errorf("%s: button %d out of limits: %+v", name, i, btn)
		}
		got, ok := ParseFeedback(btn.Value)
		w := want
		w.Useful = i == 0
		if !ok || got != w {
			t.Errorf("%s: button %d value %q reads as %+v, want %+v", name, i, btn.Value, got, w)
		}
	}
}

func TestParseFeedback(t *testing.T) {
	for _, f := range []Feedback{{Useful: true, RunID: "r-1"}, {RunID: "r-1"}, {Useful: true, RunID: "r-1", On: "r-1.f3"}, {RunID: "r-2", On: "r-2.f1"}} {
		got, ok := ParseFeedback(f.Value())
		if !ok || got != f {
			t.Errorf("%+v → %q → %+v, %v", f, f.Value(), got, ok)
		}
		if run, on := ParseFeedbackTarget(f.Target()); run != f.RunID || on != f.On {
			t.Errorf("target %q → %q, %q", f.Target(), run, on)
		}
	}
	for _, bad := range []string{"", "r-1", "positive_feedback", "useful", "useful|", "maybe|r-1"} {
		if f, ok := ParseFeedback(bad); ok {
			t.Errorf("%q parsed as %+v", bad, f)
		}
	}
	// A reason form opened from an old button carries the bare run id.
	if run, on := ParseFeedbackTarget("r-9"); run != "r-9" || on != "" {
		t.Errorf("bare run id → %q, %q", run, on)
	}
}
