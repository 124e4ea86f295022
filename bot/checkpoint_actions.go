package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// CheckpointsConfig configures the checkpoint feature of an App: who may
// decide, who may pass over a checkpoint that could not be shown, where the
// source review is asked for by default and how decisions are traced.
type CheckpointsConfig struct {
	// Approvers lists, per channel id, who besides the requester may decide
	// that channel's checkpoints; the key "*" applies to every channel.
	Approvers map[string][]string
	// Admins (SLACK_ADMINS) may continue a run without a required checkpoint
	// that could not be shown.
	Admins []string
	// ReviewSources lists the channels whose guided runs ask for the source
	// review by default ("*": every channel); --review-sources asks for it
	// in any channel.
	ReviewSources []string
	// Decisions records each person's decision in its run's trace (the
	// assembly passes internal/tracing's when tracing is on); nil records
	// none.
	Decisions DecisionTracer
}

// CheckpointActions are the engine's ways past a checkpoint other than a
// decision (part of Engine).
type CheckpointActions interface {
	Skip(ctx context.Context, instanceID, by string) (*pipeline.Run, error)
	Retry(ctx context.Context, instanceID, by string) (*pipeline.Run, error)
	ContinueWithout(ctx context.Context, instanceID, admin string) (*pipeline.Run, error)
	// OfferLostAgain offers the run's current checkpoint again after its
	// stored state was found to have gone back (pipeline.Engine.OfferLostAgain).
	OfferLostAgain(ctx context.Context, runID, evidence string) (*pipeline.Run, error)
}

// Stranded posts RenderStranded where the checkpoint would have been shown
// (checkpointPlace) (pipeline.Presenter).
func (p *Presenter) Stranded(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	channel, thread := checkpointPlace(r)
	if channel == "" {
		return nil
	}
	blocks := blockkit.RenderStranded(inst)
	text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": could not be shown", 300)
	_, _, err := p.send.PostMessage(ctx, channel, slack.MsgOptionBlocks(blocks...), slack.MsgOptionText(text, false), slack.MsgOptionTS(thread))
	return err
}

// onPassOver handles Skip, Retry and Continue without it. Skip and Retry
// are for whoever may decide the run; Continue without it for admins
// (SLACK_ADMINS) only.
func (a *App) onPassOver(ctx context.Context, req *Request) error {
	act, user := req.Action, req.UserID
	log := req.Log.With("checkpoint_id", act.Value)
	var err error
	switch act.ActionID {
	case blockkit.ActionContinueWithout:
		if !slices.Contains(a.cfg.Checkpoints.Admins, user) {
			return Tell(blockkit.RenderError("Only an admin (SLACK_ADMINS) can continue without a required checkpoint.", "Nothing was changed. Retry shows it again."), "Nothing was changed")
		}
		_, err = a.engine.ContinueWithout(ctx, act.Value, user)
	default:
		if _, _, problem := a.check(ctx, act.Value, user); problem != nil {
			return Tell(problem, "Nothing was changed")
		}
		if act.ActionID == blockkit.ActionSkip {
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
		return Tell(blockkit.RenderError("This checkpoint is required, so it cannot be skipped.", "Nothing was changed; please decide it."), "Nothing was changed")
	case errors.Is(err, pipeline.ErrNotStranded):
		return Tell(blockkit.RenderError("This checkpoint can still be shown, so there is nothing to continue without.", "Nothing was changed; it can be decided (or, if optional, skipped)."), "Nothing was changed")
	case errors.Is(err, pipeline.ErrNotCurrent), errors.Is(err, checkpoints.ErrAlreadyDecided):
		return Tell(blockkit.RenderError("This checkpoint is no longer waiting: it was decided or the run moved on.", "Nothing was changed."), "Nothing was changed")
	}
	return fmt.Errorf("pass over checkpoint %s: %w", act.Value, err)
}
