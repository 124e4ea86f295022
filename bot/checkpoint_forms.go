package bot

// Opening a checkpoint's Edit or Reject form on its own fast path, so that the
// click's trigger_id (good for 3 s) is used in time even when the shared pool
// is busy or the store is slow.

import (
	"context"
	"log/slog"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
)

// Timing of the form fast path, measured from when the click arrived. A
// trigger_id is good for 3 s; views.open must be sent well before.
const (
	// formCheckBudget is how long the click waits for the authorization
	// and currency check before it opens a "loading" form instead.
	formCheckBudget = 1200 * time.Millisecond
	// formOpenDeadline is when views.open is given up.
	formOpenDeadline = ackDeadline
	// formSlots bounds the forms being opened at once.
	formSlots = 8
)

// openFast opens the Edit or Reject form of a click on its own small set of
// goroutines, so a busy shared pool cannot let the trigger_id expire. It
// reports false when every slot is taken (the caller then uses the pool).
// Its timing is on the real clock, as the trigger_id's is at Slack.
func (a *App) openFast(d delivery, cb slack.InteractionCallback, act slack.BlockAction) bool {
	received := a.now()
	select {
	case a.formSlots <- struct{}{}:
	default:
		return false
	}
	a.formWG.Go(func() {
		defer func() { <-a.formSlots }()
		defer func() {
			if r := recover(); r != nil {
				a.log.Error("bot: opening a form panicked", "panic", r)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), a.pool.timeout)
		defer cancel()
		a.openForm(ctx, received, d, cb, act)
	})
	return true
}

// checked is the outcome of check that a form needs.
type checked struct {
	inst    *checkpoints.Instance
	problem []slack.Block
	// repeated is set when the click was a delivery taken before.
	repeated bool
}

// openForm answers an Edit or Reject click. When the check is quick, it
// opens the form (or explains the refusal ephemerally); when it is slow, it
// opens a "loading" form while the trigger_id is still good and replaces
// it (views.update) with the form or the refusal once the check is done.
func (a *App) openForm(ctx context.Context, received time.Time, d delivery, cb slack.InteractionCallback, act slack.BlockAction) {
	user, instID := cb.User.ID, act.Value
	req := a.clickRequest(cb, act)
	log := req.Log.With("checkpoint_id", instID)
	action, _ := blockkit.ActionOf(act.ActionID)
	done := make(chan checked, 1)
	go func() { // owned: every path below receives from done before returning
		if !a.firstDelivery(ctx, d) {
			done <- checked{repeated: true}
			return
		}
		_, inst, problem := a.check(ctx, instID, user)
		done <- checked{inst: inst, problem: problem}
	}()
	form := func(c checked) slack.ModalViewRequest {
		if action == checkpoints.Reject {
			return blockkit.RejectModal(c.inst)
		}
		return blockkit.EditModal(c.inst)
	}
	openCtx, cancelOpen := context.WithTimeout(ctx, received.Add(formOpenDeadline).Sub(a.now())) // on a.clock's time
	defer cancelOpen()
	wait := a.clock.NewTimer(max(received.Add(formCheckBudget).Sub(a.now()), 0), "bot", "formcheck")
	defer wait.Stop()
	select {
	case c := <-done:
		if c.repeated {
			return
		}
		if c.problem != nil {
			log.Info("bot: click refused")
			a.answer(ctx, req, Tell(c.problem, "Nothing was changed"))
			return
		}
		if _, err := a.send.OpenView(openCtx, cb.TriggerID, form(c)); err != nil {
			log.Error("bot: opening the form failed", "err", err)
			a.answer(ctx, req, Tell(blockkit.RenderError("I couldn't open the form ("+blockkit.Escape(SlackErrorCode(err))+").", "Please click the button again."), "Could not open the form"))
			return
		}
		a.adoptClickedMessage(ctx, req, c.inst, log)
		a.formOpened(ctx, log, action, instID, user)
	case <-wait.C:
		v, err := a.send.OpenView(openCtx, cb.TriggerID, loadingModal(action))
		c := <-done
		if c.repeated {
			if err == nil { // the first delivery had not used the trigger: close the loop in the form
				_, _ = a.send.UpdateView(ctx, *blockkit.NoticeModal([]slack.Block{blockkit.Section("This click was handled already.")}), v.Hash, v.ID)
			}
			return
		}
		if err != nil {
			log.Error("bot: opening the form failed", "err", err)
			if c.problem == nil {
				c.problem = blockkit.RenderError("I couldn't open the form ("+blockkit.Escape(SlackErrorCode(err))+").", "Please click the button again.")
			}
			a.answer(ctx, req, Tell(c.problem, "Could not open the form"))
			return
		}
		next := form
		if c.problem != nil {
			log.Info("bot: click refused")
			next = func(checked) slack.ModalViewRequest { return *blockkit.NoticeModal(c.problem) }
		}
		if _, err := a.send.UpdateView(ctx, next(c), v.Hash, v.ID); err != nil {
			// The person may have closed the loading form; nothing to undo.
			log.Warn("bot: replacing the loading form failed", "err", err)
			return
		}
		if c.problem == nil {
			a.adoptClickedMessage(ctx, req, c.inst, log)
			a.formOpened(ctx, log, action, instID, user)
		}
	}
}

// formOpened tells the engine that someone opened a checkpoint's Edit form.
func (a *App) formOpened(ctx context.Context, log *slog.Logger, action checkpoints.Action, instID, user string) {
	if action != checkpoints.Edit {
		return
	}
	if err := a.engine.Opened(ctx, instID, user); err != nil {
		log.Warn("bot: marking the checkpoint opened failed", "err", err)
	}
}

// loadingModal is shown while a slow store is asked about a checkpoint.
func loadingModal(action checkpoints.Action) slack.ModalViewRequest {
	title := "Edit"
	if action == checkpoints.Reject {
		title = "Reject"
	}
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  blockkit.Plain(title, blockkit.MaxModalTitle),
		Close:  blockkit.Plain("Cancel", blockkit.MaxModalTitle),
		Blocks: slack.Blocks{BlockSet: []slack.Block{blockkit.Section(":hourglass_flowing_sand: Loading the checkpoint…")}},
	}
}
