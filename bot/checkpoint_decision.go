package bot

// Deciding a checkpoint from a click (Approve) or a submitted Edit or Reject
// form: who may decide, whether it is still current, recording the decision
// and explaining a refusal.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// preAckBudget bounds the work a view submission does before its ack.
const preAckBudget = 2 * time.Second

// onCheckpointAction handles a click on a checkpoint's Approve, Edit or
// Reject button after the ack (Edit and Reject come here only when the form
// fast path is full).
func (a *App) onCheckpointAction(ctx context.Context, req *Request) error {
	cb, act, user, log := req.Callback, req.Action, req.UserID, req.Log
	action, _ := blockkit.ActionOf(act.ActionID)
	instID := act.Value
	log = log.With("checkpoint_id", instID)
	r, inst, problem := a.check(ctx, instID, user)
	if problem != nil {
		log.Info("bot: click refused")
		if inst == nil {
			a.retireLostMessage(ctx, req, r, instID)
		}
		return Tell(problem, "Nothing was changed")
	}
	log = log.With("run_id", r.ID)
	a.adoptClickedMessage(ctx, req, inst, log)
	switch action {
	case checkpoints.Edit, checkpoints.Reject:
		view := blockkit.EditModal(inst)
		if action == checkpoints.Reject {
			view = blockkit.RejectModal(inst)
		}
		if _, err := a.send.OpenView(ctx, cb.TriggerID, view); err != nil {
			log.Error("bot: opening the form failed", "err", err)
			return Tell(blockkit.RenderError("I couldn't open the form ("+blockkit.Escape(SlackErrorCode(err))+").", "Please click the button again."), "Could not open the form")
		}
		if action == checkpoints.Edit {
			if err := a.engine.Opened(ctx, instID, user); err != nil {
				log.Warn("bot: marking the checkpoint opened failed", "err", err)
			}
		}
	case checkpoints.Approve:
		_, err := a.decide(ctx, req, r, instID, checkpoints.Decision{Action: checkpoints.Approve, By: user, At: a.now()})
		return err
	}
	return nil
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
		blocks = validationProblem(ve.Fields)
	default:
		// Decide reports any other error only when nothing was written.
		log.Error("bot: recording a decision failed", "err", err)
		blocks = blockkit.RenderError("I couldn't record your decision because of an internal error.", "Please click again in a minute; nothing was changed.")
	}
	log.Info(outcome, "reason", err)
	return ctx, Tell(blocks, text)
}

// onSubmission handles a submitted Edit or Reject form: it validates before
// the ack (field errors go back in the ack), then records the decision. A
// problem found after the form was closed (at the ack deadline) is told in
// the run's thread, where the person clicked.
func (a *App) onSubmission(ctx context.Context, req *Request) error {
	cb := req.Callback
	user, instID := cb.User.ID, cb.View.PrivateMetadata
	var state map[string]map[string]slack.BlockAction
	if cb.View.State != nil {
		state = cb.View.State.Values
	}
	pctx, cancel := context.WithTimeout(ctx, preAckBudget)
	r, inst, problem := a.check(pctx, instID, user)
	cancel()
	if r != nil {
		req.answerBeside(r)
	}
	if problem != nil {
		if r == nil {
			req.Log.Info("bot: a refused form cannot be explained in a thread: the run is unknown")
		}
		return Tell(problem, "Your form was not saved")
	}
	d := checkpoints.Decision{By: user, At: a.now()}
	switch cb.View.CallbackID {
	case blockkit.CallbackEdit:
		values := blockkit.ParseSubmission(inst.Fields, state)
		if _, errs := checkpoints.Validate(inst.Fields, values); len(errs) > 0 {
			if !req.Ack(slack.NewErrorsViewSubmissionResponse(blockkit.SubmissionErrors(inst.Fields, errs))) {
				return Tell(validationProblem(errs), "Your changes were not saved")
			}
			return nil
		}
		d.Action, d.Values = checkpoints.Edit, values
	case blockkit.CallbackReject:
		reason := blockkit.RejectReason(state)
		if reason == "" {
			if !req.Ack(slack.NewErrorsViewSubmissionResponse(map[string]string{blockkit.ReasonBlockID: "Please say why, so the researcher can do better."})) {
				return Tell(blockkit.RenderError("Nothing was rejected: a rejection needs a reason.", "Click *Reject* again and say why."), "Nothing was rejected")
			}
			return nil
		}
		d.Action, d.Note = checkpoints.Reject, reason
	default:
		req.Ack(nil)
		return nil
	}
	req.Ack(nil)
	ctx, err := a.decide(ctx, req, r, instID, d)
	if err != nil {
		return err
	}
	a.homeDecided(ctx, req)
	return nil
}

// validationProblem lists field problems for people.
func validationProblem(errs []checkpoints.FieldError) []slack.Block {
	var parts []string
	for _, fe := range errs {
		parts = append(parts, "• *"+blockkit.EscapeTruncate(fe.Key, 100)+"*: "+blockkit.EscapeTruncate(fe.Message, 300))
	}
	return blockkit.RenderError(blockkit.CutRunes("Your changes were not saved:\n"+strings.Join(parts, "\n"), blockkit.MaxSectionText-40), "Click *Edit* again to fix them.")
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
