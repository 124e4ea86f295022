package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// preAckBudget bounds the work a view submission does before its ack.
const preAckBudget = 2 * time.Second

// onInteractive handles button clicks and modal submissions. Clicks are
// acked at once; submissions are acked by their handler (with field errors
// when there are some) or at ackDeadline at the latest.
func (a *App) onInteractive(k *acker, cb slack.InteractionCallback) {
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		k.ack(nil)
		if len(cb.ActionCallback.BlockActions) == 0 {
			return
		}
		act := *cb.ActionCallback.BlockActions[0]
		if !a.pool.submit(func(ctx context.Context) { a.onAction(ctx, cb, act) }) {
			a.log.Warn("bot: busy; dropped a click", "user", cb.User.ID, "action", act.ActionID)
			a.overflow(func(ctx context.Context) {
				a.ephemeral(ctx, cb.Channel.ID, cb.User.ID, threadOf(cb), RenderError("I'm very busy right now and couldn't take that click.", "Please click again in a minute."), "busy")
			})
		}
	case slack.InteractionTypeViewSubmission:
		k.guard()
		if !a.pool.submit(func(ctx context.Context) { a.onSubmission(ctx, k, cb) }) {
			a.log.Warn("bot: busy; could not take a form", "user", cb.User.ID)
			k.ack(slack.NewUpdateViewSubmissionResponse(noticeModal(RenderError("I'm very busy right now and couldn't save this.", "Please try again in a minute."))))
		}
	case slack.InteractionTypeViewClosed:
		k.ack(nil)
		a.log.Info("bot: form closed without saving", "user", cb.User.ID, "checkpoint_id", cb.View.PrivateMetadata)
	default:
		k.ack(nil)
	}
}

// threadOf is the thread a clicked message is in.
func threadOf(cb slack.InteractionCallback) string {
	if cb.Container.ThreadTs != "" {
		return cb.Container.ThreadTs
	}
	return cb.Message.ThreadTimestamp
}

// onAction handles one button click after the ack.
func (a *App) onAction(ctx context.Context, cb slack.InteractionCallback, act slack.BlockAction) {
	user, channel, thread := cb.User.ID, cb.Channel.ID, threadOf(cb)
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	log := a.log.With("user", user, "channel", channel, "action", act.ActionID)
	if strings.HasPrefix(act.ActionID, StreamActionPrefix) {
		if h, ok := a.cfg.Streams.(StreamActionHandler); ok {
			h.HandleStreamAction(ctx, cb, act)
		} else {
			log.Warn("bot: a stream button, but streams are not enabled")
		}
		return
	}
	switch act.ActionID {
	case ActionCancelConfirm:
		a.confirmCancel(ctx, cb, act.Value)
		return
	case ActionCancelAbort:
		a.replaceOriginal(ctx, cb, []slack.Block{section("OK — the run keeps going.")}, "Not cancelled")
		return
	}
	action, ok := actionOf(act.ActionID)
	if !ok {
		log.Warn("bot: unknown action")
		return
	}
	instID := act.Value
	log = log.With("checkpoint_id", instID)
	r, inst, problem := a.check(ctx, instID, user)
	if problem != nil {
		log.Info("bot: click refused")
		a.ephemeral(ctx, channel, user, thread, problem, "Nothing was changed")
		return
	}
	log = log.With("run_id", r.ID)
	switch action {
	case checkpoints.Edit, checkpoints.Reject:
		view := EditModal(inst)
		if action == checkpoints.Reject {
			view = RejectModal(inst)
		}
		if _, err := a.api.OpenViewContext(ctx, cb.TriggerID, view); err != nil {
			log.Error("bot: opening the form failed", "err", err)
			a.ephemeral(ctx, channel, user, thread, RenderError("I couldn't open the form ("+Escape(slackErrorCode(err))+").", "Please click the button again."), "Could not open the form")
			return
		}
		if action == checkpoints.Edit {
			if err := a.engine.Opened(ctx, instID, user); err != nil {
				log.Warn("bot: marking the checkpoint opened failed", "err", err)
			}
		}
	case checkpoints.Approve:
		a.decide(ctx, r, instID, checkpoints.Decision{Action: checkpoints.Approve, By: user, At: a.now()})
	}
}

// check loads the run of a checkpoint and checks that user may decide it and
// that it is still the one the run waits on. It returns an explanation for
// the user when not.
func (a *App) check(ctx context.Context, instID, user string) (*pipeline.Run, *checkpoints.Instance, []slack.Block) {
	runID := a.runIDOf(instID)
	if runID == "" {
		return nil, nil, RenderError("This button doesn't belong to any research run I know.", "Nothing was changed.")
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
	case inst == nil:
		return r, nil, RenderError("I can't find this checkpoint in run "+runRef(r.ID)+" any more.", "Nothing was changed.")
	case !a.allowed(r, user):
		return r, inst, notAllowed(r)
	case inst.Final():
		return r, inst, alreadyDecided(inst)
	case r.Status.Final():
		return r, inst, RenderError("Run "+runRef(r.ID)+" has already finished ("+statusText(r.Status)+"), so there is nothing left to decide.", "Nothing was changed.")
	case r.Waiting != inst.ID:
		return r, inst, superseded(r)
	}
	return r, inst, nil
}

// alreadyDecided explains a second decision on a checkpoint.
func alreadyDecided(inst *checkpoints.Instance) []slack.Block {
	if d := inst.Decision; d != nil {
		return RenderError(fmt.Sprintf("*%s* was already decided: %s by %s on %s.", EscapeTruncate(oneLine(firstNonEmpty(inst.Label, inst.DefinitionID)), 100), Escape(string(d.Action)), who(d.By), slackDate(d.At)), "Your click changed nothing.")
	}
	return RenderError("This checkpoint was already decided.", "Your click changed nothing.")
}

// superseded explains a click on an old checkpoint.
func superseded(r *pipeline.Run) []slack.Block {
	return RenderError("This checkpoint is no longer current: the run has moved on and a newer message in the thread asks for the decision.", "Nothing was changed; use the latest message in run "+runRef(r.ID)+"'s thread.")
}

// decide records a decision and explains a refusal to the user.
func (a *App) decide(ctx context.Context, r *pipeline.Run, instID string, d checkpoints.Decision) {
	log := a.log.With("run_id", r.ID, "checkpoint_id", instID, "user", d.By, "decision", d.Action)
	_, err := a.engine.Decide(ctx, instID, d)
	if err == nil {
		log.Info("bot: decision recorded")
		return
	}
	var ve *checkpoints.ValidationError
	var blocks []slack.Block
	switch {
	case errors.Is(err, checkpoints.ErrAlreadyDecided):
		blocks = RenderError("Someone already decided this checkpoint; your decision was not applied twice.", "Nothing else changed.")
		if fresh, lerr := a.engine.Load(ctx, r.ID); lerr == nil {
			for i := range fresh.Checkpoints {
				if fresh.Checkpoints[i].ID == instID {
					blocks = alreadyDecided(&fresh.Checkpoints[i])
				}
			}
		}
	case errors.Is(err, pipeline.ErrNotCurrent):
		blocks = superseded(r)
	case errors.Is(err, pipeline.ErrRunFinished):
		blocks = RenderError("Run "+runRef(r.ID)+" has already finished, so there is nothing left to decide.", "Nothing was changed.")
	case errors.Is(err, pipeline.ErrNotFound):
		blocks = a.runLookupError(err, r.ID)
	case errors.Is(err, checkpoints.ErrActionNotAllowed):
		blocks = RenderError("This checkpoint doesn't offer that decision.", "Nothing was changed.")
	case errors.As(err, &ve):
		blocks = validationProblem(ve.Fields)
	default:
		log.Error("bot: recording a decision failed", "err", err)
		blocks = RenderError("I couldn't record your decision because of an internal error.", "Please click again in a minute; nothing was changed.")
	}
	log.Info("bot: decision refused", "reason", err)
	a.ephemeral(ctx, r.Origin.Channel, d.By, r.Origin.ThreadTS, blocks, "Your decision was not applied")
}

// onSubmission handles a submitted Edit or Reject form: it validates before
// the ack (field errors go back in the ack), then records the decision.
func (a *App) onSubmission(ctx context.Context, k *acker, cb slack.InteractionCallback) {
	user, instID := cb.User.ID, cb.View.PrivateMetadata
	var state map[string]map[string]slack.BlockAction
	if cb.View.State != nil {
		state = cb.View.State.Values
	}
	pctx, cancel := context.WithTimeout(ctx, preAckBudget)
	r, inst, problem := a.check(pctx, instID, user)
	cancel()
	if problem != nil {
		k.ack(slack.NewUpdateViewSubmissionResponse(noticeModal(problem)))
		return
	}
	d := checkpoints.Decision{By: user, At: a.now()}
	switch cb.View.CallbackID {
	case CallbackEdit:
		values := ParseSubmission(inst.Fields, state)
		if _, errs := checkpoints.Validate(inst.Fields, values); len(errs) > 0 {
			if !k.ack(slack.NewErrorsViewSubmissionResponse(SubmissionErrors(inst.Fields, errs))) {
				// Too late for the form (it was closed at the deadline): say it in the thread.
				a.ephemeral(ctx, r.Origin.Channel, user, r.Origin.ThreadTS, validationProblem(errs), "Your changes were not saved")
			}
			return
		}
		d.Action, d.Values = checkpoints.Edit, values
	case CallbackReject:
		reason := rejectReason(state)
		if reason == "" {
			if !k.ack(slack.NewErrorsViewSubmissionResponse(map[string]string{reasonBlockID: "Please say why, so the researcher can do better."})) {
				a.ephemeral(ctx, r.Origin.Channel, user, r.Origin.ThreadTS, RenderError("Nothing was rejected: a rejection needs a reason.", "Click *Reject* again and say why."), "Nothing was rejected")
			}
			return
		}
		d.Action, d.Note = checkpoints.Reject, reason
	default:
		k.ack(nil)
		return
	}
	k.ack(nil)
	a.decide(ctx, r, instID, d)
}

// validationProblem lists field problems for people.
func validationProblem(errs []checkpoints.FieldError) []slack.Block {
	var parts []string
	for _, fe := range errs {
		parts = append(parts, "• *"+EscapeTruncate(fe.Key, 100)+"*: "+EscapeTruncate(fe.Message, 300))
	}
	return RenderError(cutRunes("Your changes were not saved:\n"+strings.Join(parts, "\n"), MaxSectionText-40), "Click *Edit* again to fix them.")
}

// noticeModal replaces a form with an explanation.
func noticeModal(blocks []slack.Block) *slack.ModalViewRequest {
	return &slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain("researchbot", MaxModalTitle),
		Close:  plain("Close", MaxModalTitle),
		Blocks: slack.Blocks{BlockSet: blocks},
	}
}

// confirmCancel cancels a run after the requester confirmed.
func (a *App) confirmCancel(ctx context.Context, cb slack.InteractionCallback, runID string) {
	user := cb.User.ID
	r, err := a.engine.Load(ctx, runID)
	if err != nil {
		a.replaceOriginal(ctx, cb, a.runLookupError(err, runID), "No such run")
		return
	}
	if !a.allowed(r, user) {
		a.replaceOriginal(ctx, cb, notAllowed(r), "Not allowed")
		return
	}
	if err := a.engine.Cancel(ctx, runID, user); err != nil {
		if errors.Is(err, pipeline.ErrRunFinished) {
			a.replaceOriginal(ctx, cb, RenderError("Run "+runRef(runID)+" had already finished.", ""), "Already finished")
			return
		}
		a.log.Error("bot: cancelling a run failed", "run_id", runID, "user", user, "err", err)
		a.replaceOriginal(ctx, cb, RenderError("I couldn't cancel run "+runRef(runID)+".", "Please try again in a minute."), "Cancel failed")
		return
	}
	a.log.Info("bot: run cancel requested", "run_id", runID, "user", user)
	a.replaceOriginal(ctx, cb, []slack.Block{section(":no_entry_sign: Cancelling run " + runRef(runID) + "; it stops at its next step.")}, "Cancelling")
}

// replaceOriginal replaces the clicked (ephemeral) message via response_url.
func (a *App) replaceOriginal(ctx context.Context, cb slack.InteractionCallback, blocks []slack.Block, text string) {
	if cb.ResponseURL == "" {
		a.ephemeral(ctx, cb.Channel.ID, cb.User.ID, threadOf(cb), blocks, text)
		return
	}
	err := retry429(ctx, func() error {
		_, _, err := a.api.PostMessageContext(ctx, cb.Channel.ID, slack.MsgOptionReplaceOriginal(cb.ResponseURL), quiet(blocks, text))
		return err
	})
	if err != nil {
		a.log.Error("bot: replying to a click failed", "user", cb.User.ID, "err", err)
	}
}
