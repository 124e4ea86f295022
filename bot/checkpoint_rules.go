package bot

// The App's rules about checkpoints, which every feature acting on one
// follows (through Request.CheckCheckpoint and Request.Decide): who may
// decide, whether a checkpoint is still the one its run waits on, how a
// decision is recorded and traced, and how a refusal is explained. They
// stay in bot, stated once, because more than one feature follows them:
// the checkpoint's buttons and forms (bot/decisions, on the thread's
// message or the App Home's), a clarifying answer (bot/clarify, Decide)
// and the source review's "Never use a site…" (bot/neverdomain,
// CheckCheckpoint); who may decide (allowed, Request.MayDecide) is also
// what steering, shared files and the Home's list follow.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// CheckpointsConfig configures the App's rules about checkpoints: who may
// decide, where the source review is asked for by default and how
// decisions are traced. (Who may pass over a checkpoint that could not be
// shown is bot/decisions' Config.)
type CheckpointsConfig struct {
	// Approvers lists, per channel id, who besides the requester may decide
	// that channel's checkpoints; the key "*" applies to every channel.
	Approvers map[string][]string
	// ReviewSources lists the channels whose guided runs ask for the source
	// review by default ("*": every channel); --review-sources asks for it
	// in any channel.
	ReviewSources []string
	// Decisions records each person's decision in its run's trace (the
	// assembly passes internal/tracing's when tracing is on); nil records
	// none.
	Decisions DecisionTracer
}

// check loads the run of a checkpoint and checks that user may decide it and
// that it is still the one the run waits on. It returns an explanation for
// the user when not.
func (a *App) check(ctx context.Context, instID, user string) (*pipeline.Run, *checkpoints.Instance, []slack.Block) {
	runID := pipeline.RunIDOf(instID)
	if runID == "" {
		return nil, nil, blockkit.RenderError("This button doesn't belong to any research run I know.", "Nothing was changed.")
	}
	r, err := a.engine.Load(ctx, runID)
	if err != nil {
		return nil, nil, a.runLookupError(err, runID)
	}
	var inst *checkpoints.Instance
	for i := range r.Checkpoints {
		if r.Checkpoints[i].ID == instID {
			inst = &r.Checkpoints[i]
		}
	}
	switch {
	case inst == nil && !r.Status.Final() && r.Current() != nil && a.allowed(r, user):
		fresh, blocks := a.lostCheckpoint(ctx, r, instID)
		return fresh, nil, blocks
	case inst == nil:
		return r, nil, blockkit.RenderError("I can't find this checkpoint in run "+blockkit.RunRef(r.ID)+" any more.", "Nothing was changed.")
	case !a.allowed(r, user):
		return r, inst, notAllowed(r)
	case inst.Final():
		return r, inst, alreadyDecided(inst)
	case r.Status.Final():
		return r, inst, blockkit.RenderError("Run "+blockkit.RunRef(r.ID)+" has already finished ("+blockkit.StatusText(r.Status)+"), so there is nothing left to decide.", "Nothing was changed.")
	case r.Waiting != inst.ID:
		return r, inst, superseded(r)
	}
	return r, inst, nil
}

// alreadyDecided explains a second decision on a checkpoint.
func alreadyDecided(inst *checkpoints.Instance) []slack.Block {
	if d := inst.Decision; d != nil {
		return blockkit.RenderError(fmt.Sprintf("*%s* was already decided: %s by %s on %s.", blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID)), 100), blockkit.Escape(string(d.Action)), blockkit.Who(d.By), blockkit.SlackDate(d.At)), "Your click changed nothing.")
	}
	return blockkit.RenderError("This checkpoint was already decided.", "Your click changed nothing.")
}

// superseded explains a click on an old checkpoint.
func superseded(r *pipeline.Run) []slack.Block { return blockkit.RenderNotCurrent(r.ID) }

// decide records a decision and tells the user what became of it, truly:
// recorded (the collapsed checkpoint message says so), unknown (the store
// stopped answering after the decision was sent: say exactly that), or not
// recorded (and why). The decision is a span of its run's trace when
// tracing is on (traceDecision): the context returned carries it, for the
// Slack calls the caller makes for the decision.
func (a *App) decide(ctx context.Context, req *Request, r *pipeline.Run, instID string, d checkpoints.Decision) (context.Context, error) {
	log := a.log.With("run_id", r.ID, "checkpoint_id", instID, "user", d.By, "decision", d.Action)
	ctx, traced := a.traceDecision(ctx, req, r, instID, d)
	_, err := a.engine.Decide(ctx, instID, d)
	traced(err)
	if err == nil {
		log.Info("bot: decision recorded")
		return ctx, nil
	}
	var ve *checkpoints.ValidationError
	var blocks []slack.Block
	text := "Your decision was not applied"
	outcome := "bot: decision not applied"
	switch {
	case errors.Is(err, pipeline.ErrDecisionUnknown):
		outcome = "bot: decision outcome unknown: it may have been recorded"
		log.Error("bot: could not confirm a decision", "err", err)
		blocks = blockkit.RenderError("I couldn't confirm that your decision was recorded: the store stopped answering just after I sent it.",
			"If the checkpoint message still shows its buttons in a minute, please click again; if it shows your decision, it was recorded and the run goes on.")
		text = "Your decision may not have been recorded"
	case errors.Is(err, checkpoints.ErrAlreadyDecided):
		blocks = blockkit.RenderError("Someone already decided this checkpoint; your decision was not applied twice.", "Nothing else changed.")
		if fresh, lerr := a.engine.Load(ctx, r.ID); lerr == nil {
			for i := range fresh.Checkpoints {
				if fresh.Checkpoints[i].ID == instID {
					blocks = alreadyDecided(&fresh.Checkpoints[i])
				}
			}
		}
	case errors.Is(err, pipeline.ErrCheckpointLost):
		blocks = lostCheckpointAnswer(r)
	case errors.Is(err, pipeline.ErrNotCurrent):
		blocks = superseded(r)
	case errors.Is(err, pipeline.ErrNotFound):
		blocks = a.runLookupError(err, r.ID)
	case errors.Is(err, checkpoints.ErrActionNotAllowed):
		blocks = blockkit.RenderError("This checkpoint doesn't offer that decision.", "Nothing was changed.")
	case errors.As(err, &ve) && d.Action == checkpoints.Approve:
		blocks = approveRefused(r.Instance(instID), ve.Fields)
		text = "Not approved: a required field is empty"
	case errors.As(err, &ve):
		blocks = blockkit.RenderFieldProblems(ve.Fields)
	default:
		// Decide reports any other error only when nothing was written.
		log.Error("bot: recording a decision failed", "err", err)
		blocks = blockkit.RenderError("I couldn't record your decision because of an internal error.", "Please click again in a minute; nothing was changed.")
	}
	log.Info(outcome, "reason", err)
	return ctx, Tell(blocks, text)
}

// approveRefused says why an Approve was refused: the required fields of
// inst left empty, named by their labels.
func approveRefused(inst *checkpoints.Instance, errs []checkpoints.FieldError) []slack.Block {
	var parts []string
	for _, fe := range errs {
		name := fe.Key
		if inst != nil {
			for _, f := range inst.Fields {
				if f.Key == fe.Key && f.Label != "" {
					name = f.Label
				}
			}
		}
		parts = append(parts, "• *"+blockkit.EscapeTruncate(blockkit.OneLine(name), 100)+"*")
	}
	return blockkit.RenderError(blockkit.CutRunes("Not approved: these required fields are empty:\n"+strings.Join(parts, "\n"), blockkit.MaxSectionText-40), "Nothing was changed. Click *Edit* to fill them in; saving the form approves it.")
}
