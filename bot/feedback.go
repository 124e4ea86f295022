package bot

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// The callback id of the optional reason form a 👎 opens, and its input.
const (
	CallbackNotUseful = "report_not_useful_reason"
	verdictReasonID   = "verdict_reason"
)

// VerdictReasonModal asks, optionally, why a report was not useful.
func VerdictReasonModal(runID string) slack.ModalViewRequest {
	t := slack.NewPlainTextInputBlockElement(blockkit.Plain("e.g. it missed the 2025 studies", 150), blockkit.StartInput)
	t.Multiline = true
	t.MaxLength = pipeline.MaxFeedbackReasonRunes
	in := slack.NewInputBlock(verdictReasonID, blockkit.Plain("What was missing or wrong?", blockkit.MaxInputLabel), blockkit.Plain("Optional. It is kept with the run for whoever improves researchbot.", blockkit.MaxInputLabel), t)
	in.Optional = true
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackNotUseful,
		Title:           blockkit.Plain("Not useful", blockkit.MaxModalTitle),
		Submit:          blockkit.Plain("Send", blockkit.MaxModalTitle),
		Close:           blockkit.Plain("Skip", blockkit.MaxModalTitle),
		PrivateMetadata: runID,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			blockkit.Section("Your :thumbsdown: is recorded. If you say why, the next reports can be better."),
			in,
		}},
	}
}

// registerFeedback routes the 👍 / 👎 buttons and the reason form.
func (a *App) registerFeedback(r *Routes) {
	r.Action(blockkit.ActionUseful, a.onVerdict)
	r.Action(blockkit.ActionNotUseful, a.onVerdict)
	r.View(CallbackNotUseful, a.onVerdictReason)
}

// onVerdict records a 👍 or 👎 click; a 👎 opens the optional reason form.
func (a *App) onVerdict(ctx context.Context, req *Request) error {
	useful, runID := req.Action.ActionID == blockkit.ActionUseful, req.Action.Value
	if !useful {
		// The trigger_id lives 3 s: open the form before saving.
		if _, err := a.api.OpenViewContext(ctx, req.TriggerID, VerdictReasonModal(runID)); err != nil {
			req.Log.Warn("bot: opening the reason form failed", "run_id", runID, "err", err)
		}
	}
	if err := a.recordVerdict(ctx, runID, pipeline.Verdict{By: req.UserID, Useful: useful, At: a.now()}); err != nil {
		return tell(a.verdictProblem(err, runID), "Your feedback was not recorded")
	}
	what := ":thumbsup: useful"
	if !useful {
		what = ":thumbsdown: not useful"
	}
	req.Reply(ctx, []slack.Block{blockkit.ContextText("Thanks — your verdict on run " + blockkit.RunRef(runID) + " is recorded: " + what + ". Click the other button to change it.")}, "Feedback recorded")
	return nil
}

// onVerdictReason saves the reason given in the 👎 form.
func (a *App) onVerdictReason(ctx context.Context, req *Request) error {
	req.Ack(nil)
	cb := req.Callback
	var reason string
	if cb.View.State != nil {
		reason = cb.View.State.Values[verdictReasonID][blockkit.StartInput].Value
	}
	runID := cb.View.PrivateMetadata
	if err := a.recordVerdict(ctx, runID, pipeline.Verdict{By: req.UserID, Useful: false, Reason: blockkit.Visible(reason), At: a.now()}); err != nil {
		if r, lerr := a.engine.Load(ctx, runID); lerr == nil {
			req.Channel, req.Thread = r.Origin.Channel, r.Origin.ThreadTS
		}
		return tell(a.verdictProblem(err, runID), "Your reason was not saved")
	}
	return nil
}

// recordVerdict saves a verdict and counts it (a reason added to a 👎 is
// not counted again).
func (a *App) recordVerdict(ctx context.Context, runID string, v pipeline.Verdict) error {
	r, err := a.engine.RecordVerdict(ctx, runID, v)
	if err != nil {
		return err
	}
	if v.Reason == "" {
		a.log.Info("bot: report feedback recorded", "run_id", r.ID, "user", v.By, "useful", v.Useful)
		verdict := "not_useful"
		if v.Useful {
			verdict = "useful"
		}
		a.metrics.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_report_feedback_total",
			Help: "Verdicts people gave on reports with the 👍 / 👎 buttons, by verdict (a changed verdict counts again)."}, "verdict").WithLabelValues(verdict).Inc()
	}
	return nil
}

// verdictProblem explains why feedback was not recorded.
func (a *App) verdictProblem(err error, runID string) []slack.Block {
	if errors.Is(err, pipeline.ErrNoReport) {
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" has no report to give feedback on.", "Nothing was recorded.")
	}
	if errors.Is(err, pipeline.ErrNotFound) {
		return a.runLookupError(err, runID)
	}
	a.log.Error("bot: recording feedback failed", "run_id", runID, "err", err)
	return blockkit.RenderError("I couldn't record your feedback because of an internal error.", "Please click again in a minute; nothing was recorded.")
}
