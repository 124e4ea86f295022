package bot

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// registerFeedback routes the native 👍 / 👎 (feedback_buttons), the custom
// buttons of messages posted before it, and the reason form.
func (a *App) registerFeedback(r *Routes) {
	r.Action(blockkit.ActionFeedback, a.onFeedback)
	r.Action(blockkit.ActionUseful, a.onOldVerdict)
	r.Action(blockkit.ActionNotUseful, a.onOldVerdict)
	r.View(blockkit.CallbackNotUseful, a.onVerdictReason)
}

// onFeedback records a click on the native feedback element: the value of
// the button clicked says which verdict, on which report or answer.
func (a *App) onFeedback(ctx context.Context, req *Request) error {
	f, ok := blockkit.ParseFeedback(req.Action.Value)
	if !ok {
		req.Log.Warn("bot: a feedback click with a value I did not write", "value", req.Action.Value)
		return Tell(blockkit.RenderError("I couldn't read that feedback click.", "Nothing was recorded."), "Your feedback was not recorded")
	}
	return a.verdict(ctx, req, f)
}

// onOldVerdict records a click on the custom 👍 / 👎 buttons that reports
// carried before the native element (value: the run id).
func (a *App) onOldVerdict(ctx context.Context, req *Request) error {
	return a.verdict(ctx, req, blockkit.Feedback{Useful: req.Action.ActionID == blockkit.ActionUseful, RunID: req.Action.Value})
}

// verdict records a 👍 or 👎; a 👎 opens the optional reason form (the
// block_actions payload of either element carries a trigger_id).
func (a *App) verdict(ctx context.Context, req *Request, f blockkit.Feedback) error {
	if !f.Useful {
		// The trigger_id lives 3 s: open the form before saving.
		if _, err := a.send.OpenView(ctx, req.TriggerID, blockkit.VerdictReasonModal(f.Target())); err != nil {
			req.Log.Warn("bot: opening the reason form failed", "run_id", f.RunID, "err", err)
		}
	}
	if err := a.recordVerdict(ctx, f.RunID, pipeline.Verdict{By: req.UserID, Useful: f.Useful, On: f.On, At: a.now()}); err != nil {
		return Tell(a.verdictProblem(err, f.RunID), "Your feedback was not recorded")
	}
	what := ":thumbsup: useful"
	if !f.Useful {
		what = ":thumbsdown: not useful"
	}
	on := "run " + blockkit.RunRef(f.RunID)
	if f.On != "" {
		on = "this answer (run " + blockkit.RunRef(f.RunID) + ")"
	}
	req.Reply(ctx, []slack.Block{blockkit.ContextText("Thanks — your verdict on " + on + " is recorded: " + what + ". Click the other button to change it.")}, "Feedback recorded")
	return nil
}

// onVerdictReason saves the reason given in the 👎 form.
func (a *App) onVerdictReason(ctx context.Context, req *Request) error {
	req.Ack(nil)
	cb := req.Callback
	var reason string
	if cb.View.State != nil {
		reason = blockkit.VerdictReason(cb.View.State.Values)
	}
	runID, on := blockkit.ParseFeedbackTarget(cb.View.PrivateMetadata)
	if err := a.recordVerdict(ctx, runID, pipeline.Verdict{By: req.UserID, Useful: false, On: on, Reason: reason, At: a.now()}); err != nil {
		if r, lerr := a.engine.Load(ctx, runID); lerr == nil {
			req.Channel, req.Thread = r.Origin.Channel, r.Origin.ThreadTS
		}
		return Tell(a.verdictProblem(err, runID), "Your reason was not saved")
	}
	return nil
}

// recordVerdict saves a verdict and counts it (a reason added to a 👎 is
// not counted again): verdicts on reports and digests, and on follow-up
// answers, each in their own counter.
func (a *App) recordVerdict(ctx context.Context, runID string, v pipeline.Verdict) error {
	r, err := a.engine.RecordVerdict(ctx, runID, v)
	if err != nil {
		return err
	}
	if v.Reason == "" {
		a.log.Info("bot: feedback recorded", "run_id", r.ID, "on", v.On, "user", v.By, "useful", v.Useful)
		verdict := "not_useful"
		if v.Useful {
			verdict = "useful"
		}
		opts := prometheus.CounterOpts{
			Name: "researchbot_report_feedback_total",
			Help: "Verdicts people gave on reports and digests with 👍 / 👎, by verdict (a changed verdict counts again)."}
		if v.On != "" {
			opts = prometheus.CounterOpts{
				Name: "researchbot_answer_feedback_total",
				Help: "Verdicts people gave on follow-up answers with 👍 / 👎, by verdict (a changed verdict counts again)."}
		}
		a.metrics.CounterVec(opts, "verdict").WithLabelValues(verdict).Inc()
	}
	return nil
}

// verdictProblem explains why feedback was not recorded.
func (a *App) verdictProblem(err error, runID string) []slack.Block {
	if errors.Is(err, pipeline.ErrNoReport) {
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" has no report to give feedback on.", "Nothing was recorded.")
	}
	if errors.Is(err, pipeline.ErrNoAnswer) {
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" has no such answer to give feedback on.", "Nothing was recorded.")
	}
	if errors.Is(err, pipeline.ErrNotFound) {
		return a.runLookupError(err, runID)
	}
	a.log.Error("bot: recording feedback failed", "run_id", runID, "err", err)
	return blockkit.RenderError("I couldn't record your feedback because of an internal error.", "Please click again in a minute; nothing was recorded.")
}
