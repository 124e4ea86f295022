package blockkit

import (
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// CallbackNotUseful is the callback id of the optional reason form a 👎
// opens; VerdictReasonBlock is the block id of its one input.
const (
	CallbackNotUseful  = "report_not_useful_reason"
	VerdictReasonBlock = "verdict_reason"
)

// verdictReason is the reason form's one field: an optional textarea.
func verdictReason() checkpoints.Field {
	return checkpoints.Field{Key: VerdictReasonBlock, Type: checkpoints.FieldTextarea, Label: "What was missing or wrong?",
		Help: "Optional. It is kept with the run for whoever improves researchbot.", Placeholder: "e.g. it missed the 2025 studies",
		MaxLength: pipeline.MaxFeedbackReasonRunes}
}

// VerdictReasonModal asks, optionally, why a report (or the follow-up
// answer named by target, a Feedback's Target) was not useful.
func VerdictReasonModal(target string) slack.ModalViewRequest {
	what := "the next reports"
	if _, on := ParseFeedbackTarget(target); on != "" {
		what = "the next answers"
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackNotUseful,
		Title:           Plain("Not useful", MaxModalTitle),
		Submit:          Plain("Send", MaxModalTitle),
		Close:           Plain("Skip", MaxModalTitle),
		PrivateMetadata: target,
		Blocks: slack.Blocks{BlockSet: append([]slack.Block{
			Section("Your :thumbsdown: is recorded. If you say why, " + what + " can be better."),
		}, inputs([]checkpoints.Field{verdictReason()}, nil)...)},
	}
}

// VerdictReason reads the reason from a submitted reason form, as shown
// (Visible); "" when none was given.
func VerdictReason(state map[string]map[string]slack.BlockAction) string {
	return Visible(formValues(ParseSubmission([]checkpoints.Field{verdictReason()}, state)).raw(VerdictReasonBlock))
}
