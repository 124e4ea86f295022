package blockkit

import (
	"fmt"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Action ids of the buttons that pass over a checkpoint or show it again.
const (
	ActionSkip            = "cp_skip"             // an optional checkpoint: go on without deciding
	ActionRetry           = "cp_retry"            // a checkpoint that could not be shown: try again
	ActionContinueWithout = "cp_continue_without" // an admin: go on without a required one that cannot be shown
)

// buttonLabel is the label of a decision's button on inst: what the
// decision does where the three decisions are three real choices
// (pipeline.Choices), else Approve, Edit or Reject.
func buttonLabel(inst *checkpoints.Instance, a checkpoints.Action) string {
	if c := pipeline.Choices(inst); c != nil {
		return c[a]
	}
	return map[checkpoints.Action]string{checkpoints.Approve: "Approve", checkpoints.Edit: "Edit", checkpoints.Reject: "Reject"}[a]
}

// RenderStranded says that a required checkpoint could not be shown after
// its retries, with Retry for the people who may decide and "Continue
// without it" for admins (SLACK_ADMINS).
func RenderStranded(inst *checkpoints.Instance) []slack.Block {
	label := EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100)
	text := fmt.Sprintf(":warning: I could not show the *%s* checkpoint after %d attempts (%s). The run waits here: nothing was decided.",
		label, inst.Attempt, EscapeTruncate(OneLine(FirstNonEmpty(inst.LastError, "no reason recorded")), 300))
	return []slack.Block{
		Section(text),
		strandedButtons(inst, "cp_stranded"),
		ContextText("Retry shows it again. Only an admin can continue without it; the report will say it was not reviewed."),
	}
}

// strandedButtons are Retry and "Continue without it" for a checkpoint that
// could not be shown, in an actions block with blockID (the thread and the
// App Home show the same).
func strandedButtons(inst *checkpoints.Instance, blockID string) *slack.ActionBlock {
	retry := slack.NewButtonBlockElement(ActionRetry, inst.ID, Plain("Retry", MaxButtonText))
	retry.Style = slack.StylePrimary
	without := slack.NewButtonBlockElement(ActionContinueWithout, inst.ID, Plain("Continue without it", MaxButtonText))
	without.Style = slack.StyleDanger
	return slack.NewActionBlock(blockID, retry, without)
}
