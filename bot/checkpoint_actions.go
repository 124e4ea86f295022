package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"

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

// CheckpointActions are the engine's ways past a checkpoint other than a
// decision (part of Engine).
type CheckpointActions interface {
	Skip(ctx context.Context, instanceID, by string) (*pipeline.Run, error)
	Retry(ctx context.Context, instanceID, by string) (*pipeline.Run, error)
	ContinueWithout(ctx context.Context, instanceID, admin string) (*pipeline.Run, error)
}

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
	label := EscapeTruncate(oneLine(firstNonEmpty(inst.Label, inst.DefinitionID)), 100)
	text := fmt.Sprintf(":warning: I could not show the *%s* checkpoint after %d attempts (%s). The run waits here: nothing was decided.",
		label, inst.Attempt, EscapeTruncate(oneLine(firstNonEmpty(inst.LastError, "no reason recorded")), 300))
	return []slack.Block{
		section(text),
		strandedButtons(inst, "cp_stranded"),
		contextText("Retry shows it again. Only an admin can continue without it; the report will say it was not reviewed."),
	}
}

// strandedButtons are Retry and "Continue without it" for a checkpoint that
// could not be shown, in an actions block with blockID (the thread and the
// App Home show the same).
func strandedButtons(inst *checkpoints.Instance, blockID string) *slack.ActionBlock {
	retry := slack.NewButtonBlockElement(ActionRetry, inst.ID, plain("Retry", MaxButtonText))
	retry.Style = slack.StylePrimary
	without := slack.NewButtonBlockElement(ActionContinueWithout, inst.ID, plain("Continue without it", MaxButtonText))
	without.Style = slack.StyleDanger
	return slack.NewActionBlock(blockID, retry, without)
}

// Stranded posts RenderStranded where the checkpoint would have been shown
// (checkpointPlace).
func (p *Presenter) Stranded(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	channel, thread := checkpointPlace(r)
	if channel == "" {
		return nil
	}
	blocks := RenderStranded(inst)
	text := EscapeTruncate(oneLine(firstNonEmpty(inst.Label, inst.DefinitionID))+": could not be shown", 300)
	return retry429(ctx, p.clock, func() error {
		_, _, err := p.api.PostMessageContext(ctx, channel, slack.MsgOptionBlocks(blocks...), slack.MsgOptionText(text, false), slack.MsgOptionTS(thread))
		return err
	})
}

// onPassOver handles Skip, Retry and Continue without it. Skip and Retry
// are for whoever may decide the run; Continue without it for admins
// (SLACK_ADMINS) only.
func (a *App) onPassOver(ctx context.Context, req *Request) error {
	act, user := req.Action, req.UserID
	log := req.Log.With("checkpoint_id", act.Value)
	var err error
	switch act.ActionID {
	case ActionContinueWithout:
		if !slices.Contains(a.cfg.Admins, user) {
			return tell(RenderError("Only an admin (SLACK_ADMINS) can continue without a required checkpoint.", "Nothing was changed. Retry shows it again."), "Nothing was changed")
		}
		_, err = a.engine.ContinueWithout(ctx, act.Value, user)
	default:
		if _, _, problem := a.check(ctx, act.Value, user); problem != nil {
			return tell(problem, "Nothing was changed")
		}
		if act.ActionID == ActionSkip {
			_, err = a.engine.Skip(ctx, act.Value, user)
		} else {
			_, err = a.engine.Retry(ctx, act.Value, user)
		}
	}
	switch {
	case err == nil:
		log.Info("bot: checkpoint passed over or shown again")
		return nil
	case errors.Is(err, checkpoints.ErrCannotSkipRequired):
		return tell(RenderError("This checkpoint is required, so it cannot be skipped.", "Nothing was changed; please decide it."), "Nothing was changed")
	case errors.Is(err, pipeline.ErrNotStranded):
		return tell(RenderError("This checkpoint can still be shown, so there is nothing to continue without.", "Nothing was changed; it can be decided (or, if optional, skipped)."), "Nothing was changed")
	case errors.Is(err, pipeline.ErrNotCurrent), errors.Is(err, checkpoints.ErrAlreadyDecided):
		return tell(RenderError("This checkpoint is no longer waiting: it was decided or the run moved on.", "Nothing was changed."), "Nothing was changed")
	}
	return fmt.Errorf("pass over checkpoint %s: %w", act.Value, err)
}
