package bot

// Opening the form a click asks for on its own fast path (Routes.FormAction),
// so that the click's trigger_id (good for 3 s) is used in time even when
// the shared pool is busy or the store is slow. The path is the
// transport's: it runs before the pool, takes the click once (delivery.go)
// and keeps Slack's clock; what the form is, and whether the person may
// open it, is the route's (bot/decisions routes a checkpoint's Edit and
// Reject).

import (
	"context"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
)

// Timing of the form fast path, measured from when the click arrived. A
// trigger_id is good for 3 s; views.open must be sent well before.
const (
	// formCheckBudget is how long the click waits for its FormHandler
	// before it opens the route's "loading" form instead.
	formCheckBudget = 1200 * time.Millisecond
	// formOpenDeadline is when views.open is given up.
	formOpenDeadline = ackDeadline
	// formSlots bounds the forms being opened at once.
	formSlots = 8
)

// FormHandler prepares the form a click opens (Routes.FormAction): it
// checks that the person may open it and returns it, with what to do once
// it is shown (shown, called then; nil: nothing). When the click opens no
// form it returns why, as a Handler does (a Tell, shown to the person).
type FormHandler func(ctx context.Context, req *Request) (form slack.ModalViewRequest, shown func(ctx context.Context), err error)

// formRoute is a FormAction route: its handler, and the form shown while
// the handler is slow.
type formRoute struct {
	loading slack.ModalViewRequest
	h       FormHandler
}

// FormAction routes clicks on the action id id that open a form to h, on
// the App's fast path: h runs at once on a small set of goroutines of its
// own, not the shared pool, so the click's trigger_id (good for 3 s) is
// used in time. When h has not answered within formCheckBudget, loading
// is opened while the trigger_id is still good and replaced by the form,
// or by why not, once h answers. When every slot of the fast path is taken
// the click is served by id's Action route instead, on the pool: register
// one too.
func (r *Routes) FormAction(id string, loading slack.ModalViewRequest, h FormHandler) {
	if h == nil {
		panic("bot: nil handler for form action " + id)
	}
	if _, dup := r.forms[id]; dup {
		panic("bot: two handlers for form action " + id)
	}
	r.forms[id] = formRoute{loading: loading, h: h}
}

// form is the FormAction route of action id id, if any.
func (r *Routes) form(id string) (formRoute, bool) {
	f, ok := r.forms[id]
	return f, ok
}

// OpenForm opens view for the person who made the request, with its
// trigger_id (good for 3 s after their click). When Slack does not open
// it, it logs why and returns what to tell the person (a Tell: click
// again).
func (r *Request) OpenForm(ctx context.Context, view slack.ModalViewRequest) (*slack.ViewResponse, error) {
	v, err := r.send.OpenView(ctx, r.TriggerID, view)
	if err != nil {
		r.Log.Error("bot: opening the form failed", "err", err)
		return nil, Tell(formNotOpened(err), "Could not open the form")
	}
	return v, nil
}

// formNotOpened explains a form Slack did not open.
func formNotOpened(err error) []slack.Block {
	return blockkit.RenderError("I couldn't open the form ("+blockkit.Escape(SlackErrorCode(err))+").", "Please click the button again.")
}

// openFast opens the form of a click routed by fr on its own small set of
// goroutines, so a busy shared pool cannot let the trigger_id expire. It
// reports false when every slot is taken (the caller then uses the pool).
// Its timing is on the App's clock, as the trigger_id's is at Slack.
func (a *App) openFast(d delivery, cb slack.InteractionCallback, act slack.BlockAction, fr formRoute) bool {
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
		a.openForm(ctx, received, d, a.clickRequest(cb, act), fr)
	})
	return true
}

// prepared is what a FormHandler answered for a click.
type prepared struct {
	form  slack.ModalViewRequest
	shown func(ctx context.Context)
	err   error
	// repeated is set when the click was a delivery taken before.
	repeated bool
}

// afterShown calls what the route does once its form is shown, if anything.
func (p prepared) afterShown(ctx context.Context) {
	if p.shown != nil {
		p.shown(ctx)
	}
}

// openForm answers a click routed by fr. When its handler is quick, it
// opens the form (or explains the refusal ephemerally); when it is slow,
// it opens the "loading" form while the trigger_id is still good and
// replaces it (views.update) with the form or the refusal once the handler
// has answered.
func (a *App) openForm(ctx context.Context, received time.Time, d delivery, req *Request, fr formRoute) {
	done := make(chan prepared, 1)
	go func() { // owned: every path below receives from done before returning
		if !a.firstDelivery(ctx, d) {
			done <- prepared{repeated: true}
			return
		}
		form, shown, err := fr.h(ctx, req)
		done <- prepared{form: form, shown: shown, err: err}
	}()
	openCtx, cancelOpen := context.WithTimeout(ctx, received.Add(formOpenDeadline).Sub(a.now())) // on a.clock's time
	defer cancelOpen()
	wait := a.clock.NewTimer(max(received.Add(formCheckBudget).Sub(a.now()), 0), "bot", "formcheck")
	defer wait.Stop()
	select {
	case p := <-done:
		if p.repeated {
			return
		}
		if p.err != nil {
			a.answer(ctx, req, p.err)
			return
		}
		if _, err := req.OpenForm(openCtx, p.form); err != nil {
			a.answer(ctx, req, err)
			return
		}
		p.afterShown(ctx)
	case <-wait.C:
		v, err := a.send.OpenView(openCtx, req.TriggerID, fr.loading)
		p := <-done
		if p.repeated {
			if err == nil { // the first delivery had not used the trigger: close the loop in the form
				_, _ = a.send.UpdateView(ctx, *blockkit.NoticeModal([]slack.Block{blockkit.Section("This click was handled already.")}), v.Hash, v.ID)
			}
			return
		}
		if err != nil {
			req.Log.Error("bot: opening the form failed", "err", err)
			blocks := formNotOpened(err)
			if p.err != nil {
				blocks, _ = a.explain(req, p.err)
			}
			a.answer(ctx, req, Tell(blocks, "Could not open the form"))
			return
		}
		next := p.form
		if p.err != nil {
			blocks, _ := a.explain(req, p.err)
			next = *blockkit.NoticeModal(blocks)
		}
		if _, err := a.send.UpdateView(ctx, next, v.Hash, v.ID); err != nil {
			// The person may have closed the loading form; nothing to undo.
			req.Log.Warn("bot: replacing the loading form failed", "err", err)
			return
		}
		if p.err == nil {
			p.afterShown(ctx)
		}
	}
}
