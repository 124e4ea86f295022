package blockkit

import (
	"strings"

	"github.com/slack-go/slack"
)

// Action ids of the custom 👍 / 👎 buttons that reports carried before the
// native element (value: the run id). They are no longer rendered, but the
// messages already posted still have them, so their clicks stay routed.
const (
	ActionUseful    = "report_useful"
	ActionNotUseful = "report_not_useful"
)

// ActionFeedback is the action id of Slack's native feedback_buttons
// element under a report, a digest or a follow-up answer; the value of the
// button clicked is a Feedback's Value.
const ActionFeedback = "feedback"

// Block ids of the native feedback under a report or digest, and under a
// follow-up answer.
const (
	BlockReportFeedback = "report_feedback"
	BlockAnswerFeedback = "answer_feedback"
)

// Slack's documented limits of the feedback_buttons element and its block.
const (
	MaxFeedbackButtonText = 75   // text of positive_button / negative_button
	MaxFeedbackLabel      = 75   // accessibility_label
	MaxFeedbackValue      = 2000 // value
	MaxContextActions     = 5    // elements of a context_actions block
)

// Feedback is what one native feedback button stands for: a verdict on a
// run's report, or on one of its follow-up answers (On, the follow-up id).
type Feedback struct {
	Useful bool
	RunID  string
	On     string
}

// The verdict words at the start of a feedback value.
const (
	feedbackUseful    = "useful"
	feedbackNotUseful = "not_useful"
	feedbackSep       = "|"
)

// Value is the button value carrying f: "useful|RUN" or
// "not_useful|RUN|FOLLOWUP".
func (f Feedback) Value() string {
	parts := []string{feedbackNotUseful, f.RunID}
	if f.Useful {
		parts[0] = feedbackUseful
	}
	if f.On != "" {
		parts = append(parts, f.On)
	}
	return strings.Join(parts, feedbackSep)
}

// Target is f without its verdict ("RUN" or "RUN|FOLLOWUP"), as the reason
// form carries it.
func (f Feedback) Target() string {
	if f.On == "" {
		return f.RunID
	}
	return f.RunID + feedbackSep + f.On
}

// ParseFeedback reads a native feedback button's value; ok is false for a
// value this package did not write.
func ParseFeedback(value string) (f Feedback, ok bool) {
	verdict, target, _ := strings.Cut(value, feedbackSep)
	switch verdict {
	case feedbackUseful:
		f.Useful = true
	case feedbackNotUseful:
	default:
		return Feedback{}, false
	}
	f.RunID, f.On = ParseFeedbackTarget(target)
	return f, f.RunID != ""
}

// ParseFeedbackTarget splits a Target (or a bare run id, as the old
// buttons' forms carry) into the run id and the follow-up id.
func ParseFeedbackTarget(target string) (runID, on string) {
	runID, on, _ = strings.Cut(target, feedbackSep)
	return runID, on
}

// feedbackBlock is the native 👍 / 👎 (a feedback_buttons element in a
// context_actions block) under a report or digest (on empty) or under the
// follow-up answer on.
func feedbackBlock(runID, on string) slack.Block {
	what, blockID := "this report", BlockReportFeedback
	if on != "" {
		what, blockID = "this answer", BlockAnswerFeedback
	}
	// Run and follow-up ids are short: the value stays far below
	// MaxFeedbackValue.
	button := func(useful bool, text, verdict string) *slack.FeedbackButton {
		v := Feedback{Useful: useful, RunID: runID, On: on}.Value()
		return slack.NewFeedbackButton(Plain(text, MaxFeedbackButtonText), v).
			WithAccessibilityLabel(Truncate("Mark "+what+" as "+verdict, MaxFeedbackLabel))
	}
	return slack.NewContextActionsBlock(blockID, slack.NewFeedbackButtonsBlockElement(ActionFeedback,
		button(true, ":thumbsup: Useful", "useful"),
		button(false, ":thumbsdown: Not useful", "not useful")))
}
