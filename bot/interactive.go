package bot

// Interactive payloads (clicks, shortcuts, form submissions): their ack and
// their dispatch to the routes, the Request of a click, the notice that
// replaces a form, and the confirmed cancel of a run.

import (
	"cmp"
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// onInteractive handles button clicks and modal submissions. Clicks are
// acked at once; submissions are acked by their handler (with field errors
// when there are some) or at ackDeadline at the latest. A click or
// submission Slack delivers again is taken once (d).
func (a *App) onInteractive(k *acker, d delivery, cb slack.InteractionCallback) {
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		k.ack(nil)
		if len(cb.ActionCallback.BlockActions) == 0 {
			return
		}
		act := *cb.ActionCallback.BlockActions[0]
		if fr, ok := a.routes.form(act.ActionID); ok && a.openFast(d, cb, act, fr) {
			return // a form opens on its own fast path: its trigger_id lives 3 s
		}
		req := a.clickRequest(cb, act)
		h := a.routes.action(act.ActionID)
		if h == nil {
			req.Log.Warn("bot: unknown action")
			return
		}
		if !a.pool.submit(func(ctx context.Context) {
			if a.firstDelivery(ctx, d) {
				a.serve(ctx, h, req)
				a.homeClicked(ctx, req, cb)
			}
		}) {
			a.log.Warn("bot: busy; dropped a click", "user", cb.User.ID, "action", act.ActionID)
			a.overflow(func(ctx context.Context) {
				a.send.Ephemeral(ctx, cb.Channel.ID, cb.User.ID, threadOf(cb), blockkit.RenderError("I'm very busy right now and couldn't take that click.", "Please click again in a minute."), "busy")
			})
		}
	case slack.InteractionTypeShortcut, slack.InteractionTypeMessageAction:
		a.onShortcut(k, d, cb)
	case slack.InteractionTypeViewSubmission:
		k.guard()
		h := a.routes.view(cb.View.CallbackID)
		if h == nil {
			k.ack(nil)
			return
		}
		req := &Request{UserID: cb.User.ID, TeamID: cb.Team.ID, TriggerID: cb.TriggerID, Callback: &cb, ack: k.ack,
			Log: a.log.With("user", cb.User.ID, "checkpoint_id", cb.View.PrivateMetadata), send: a.send, app: a}
		if !a.pool.submit(func(ctx context.Context) {
			if !a.firstDelivery(ctx, d) {
				k.ack(nil)
				return
			}
			a.serve(ctx, h, req)
		}) {
			a.log.Warn("bot: busy; could not take a form", "user", cb.User.ID)
			k.ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("I'm very busy right now and couldn't save this.", "Please try again in a minute."))))
		}
	case slack.InteractionTypeViewClosed:
		k.ack(nil)
		a.log.Info("bot: form closed without saving", "user", cb.User.ID, "checkpoint_id", cb.View.PrivateMetadata)
	default:
		k.ack(nil)
	}
}

// onShortcut acks a global or message shortcut at once and hands it to its
// route (bot/start routes the start form's two shortcuts).
func (a *App) onShortcut(k *acker, d delivery, cb slack.InteractionCallback) {
	k.ack(nil)
	h := a.routes.shortcut(cb.CallbackID)
	if h == nil {
		a.log.Warn("bot: unknown shortcut", "callback_id", cb.CallbackID, "type", string(cb.Type))
		return
	}
	req := &Request{UserID: cb.User.ID, TeamID: cb.Team.ID, Channel: cb.Channel.ID, TriggerID: cb.TriggerID, Callback: &cb,
		Log: a.log.With("user", cb.User.ID, "shortcut", cb.CallbackID), send: a.send, app: a}
	if !a.pool.submit(func(ctx context.Context) {
		if a.firstDelivery(ctx, d) {
			a.serve(ctx, h, req)
		}
	}) {
		a.log.Warn("bot: busy; could not take a shortcut", "user", cb.User.ID, "shortcut", cb.CallbackID)
	}
}

// threadOf is the thread a clicked message is in.
func threadOf(cb slack.InteractionCallback) string {
	if cb.Container.ThreadTs != "" {
		return cb.Container.ThreadTs
	}
	return cb.Message.ThreadTimestamp
}

// clickRequest is the Request of a click: answers go to the clicker, in
// the thread of the clicked message.
func (a *App) clickRequest(cb slack.InteractionCallback, act slack.BlockAction) *Request {
	channel := cb.Channel.ID
	channel = cmp.Or(channel, cb.Container.ChannelID)
	return &Request{
		UserID: cb.User.ID, TeamID: cb.Team.ID, Channel: channel, Thread: threadOf(cb),
		TriggerID: cb.TriggerID, ResponseURL: cb.ResponseURL, Callback: &cb, Action: &act,
		Log: a.log.With("user", cb.User.ID, "channel", channel, "action", act.ActionID), send: a.send, app: a,
	}
}

// confirmCancel cancels a run after the requester confirmed; its answers
// replace the (ephemeral) confirmation.
func (a *App) confirmCancel(ctx context.Context, req *Request) error {
	req.ReplaceOriginal = true
	user, runID := req.UserID, req.Action.Value
	r, err := a.engine.Load(ctx, runID)
	if err != nil {
		return Tell(a.runLookupError(err, runID), "No such run")
	}
	if !a.allowed(r, user) {
		return Tell(notAllowed(r), "Not allowed")
	}
	if err := a.engine.Cancel(ctx, runID, user); err != nil {
		if errors.Is(err, pipeline.ErrRunFinished) {
			return Tell(blockkit.RenderError("Run "+blockkit.RunRef(runID)+" had already finished.", ""), "Already finished")
		}
		req.Log.Error("bot: cancelling a run failed", "run_id", runID, "err", err)
		return Tell(blockkit.RenderError("I couldn't cancel run "+blockkit.RunRef(runID)+".", "Please try again in a minute."), "Cancel failed")
	}
	req.Log.Info("bot: run cancel requested", "run_id", runID)
	req.Reply(ctx, []slack.Block{blockkit.Section(":no_entry_sign: Cancelling run " + blockkit.RunRef(runID) + "; it stops at its next step.")}, "Cancelling")
	return nil
}
