// Package feedback is the verdicts people give on reports, digests and
// follow-up answers, a feature of the bot: a click on Slack's native 👍 / 👎
// (feedback_buttons), or on the custom buttons of messages posted before
// it, records the person's verdict with the run, and a 👎 opens the
// optional reason form. It plugs into the transport (package bot) through
// the routes it registers and renders with bot/blockkit; bot does not
// import it: the assembly (internal/app/roles) builds a Feature and lists it
// in bot.Config.Features.
package feedback

import (
	"context"
	"errors"
	"log/slog"

	"github.com/coder/quartz"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what the feature needs of the research engine
// (*pipeline.Engine).
type Engine interface {
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
	RecordVerdict(ctx context.Context, runID string, v pipeline.Verdict) (*pipeline.Run, error)
}

// Config configures a Feature. Engine and the Kit's Sender are
// required.
type Config struct {
	Engine Engine
	// Kit is the transport's Sender, metrics (the verdicts are counted
	// there), logger and clock (it dates the verdicts).
	bot.Kit
}

// Feature records the verdicts people give with 👍 / 👎.
type Feature struct {
	engine  Engine
	send    *bot.Sender
	metrics *bot.Metrics
	log     *slog.Logger
	clock   quartz.Clock
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: feedback needs",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, send: kit.Sender, metrics: kit.Metrics, log: kit.Logger, clock: kit.Clock}, nil
}

// Register routes the native 👍 / 👎 (feedback_buttons), the custom
// buttons of messages posted before it, and the reason form.
func (f *Feature) Register(r *bot.Routes) {
	r.Action(blockkit.ActionFeedback, f.onFeedback)
	r.Action(blockkit.ActionUseful, f.onOldVerdict)
	r.Action(blockkit.ActionNotUseful, f.onOldVerdict)
	r.View(blockkit.CallbackNotUseful, f.onVerdictReason)
}

// onFeedback records a click on the native feedback element: the value of
// the button clicked says which verdict, on which report or answer.
func (f *Feature) onFeedback(ctx context.Context, req *bot.Request) error {
	fb, ok := blockkit.ParseFeedback(req.Action.Value)
	if !ok {
		req.Log.Warn("bot: a feedback click with a value I did not write", "value", req.Action.Value)
		return bot.Tell(blockkit.RenderError("I couldn't read that feedback click.", "Nothing was recorded."), "Your feedback was not recorded")
	}
	return f.verdict(ctx, req, fb)
}

// onOldVerdict records a click on the custom 👍 / 👎 buttons that reports
// carried before the native element (value: the run id).
func (f *Feature) onOldVerdict(ctx context.Context, req *bot.Request) error {
	return f.verdict(ctx, req, blockkit.Feedback{Useful: req.Action.ActionID == blockkit.ActionUseful, RunID: req.Action.Value})
}

// verdict records a 👍 or 👎; a 👎 opens the optional reason form (the
// block_actions payload of either element carries a trigger_id).
func (f *Feature) verdict(ctx context.Context, req *bot.Request, fb blockkit.Feedback) error {
	if !fb.Useful {
		// The trigger_id lives 3 s: open the form before saving.
		if _, err := f.send.OpenView(ctx, req.TriggerID, blockkit.VerdictReasonModal(fb.Target())); err != nil {
			req.Log.Warn("bot: opening the reason form failed", "run_id", fb.RunID, "err", err)
		}
	}
	if err := f.recordVerdict(ctx, fb.RunID, pipeline.Verdict{By: req.UserID, Useful: fb.Useful, On: fb.On, At: f.clock.Now()}); err != nil {
		return bot.Tell(f.verdictProblem(err, fb.RunID), "Your feedback was not recorded")
	}
	what := ":thumbsup: useful"
	if !fb.Useful {
		what = ":thumbsdown: not useful"
	}
	on := "run " + blockkit.RunRef(fb.RunID)
	if fb.On != "" {
		on = "this answer (run " + blockkit.RunRef(fb.RunID) + ")"
	}
	req.Reply(ctx, []slack.Block{blockkit.ContextText("Thanks — your verdict on " + on + " is recorded: " + what + ". Click the other button to change it.")}, "Feedback recorded")
	return nil
}

// onVerdictReason saves the reason given in the 👎 form.
func (f *Feature) onVerdictReason(ctx context.Context, req *bot.Request) error {
	req.Ack(nil)
	cb := req.Callback
	var reason string
	if cb.View.State != nil {
		reason = blockkit.VerdictReason(cb.View.State.Values)
	}
	runID, on := blockkit.ParseFeedbackTarget(cb.View.PrivateMetadata)
	if err := f.recordVerdict(ctx, runID, pipeline.Verdict{By: req.UserID, Useful: false, On: on, Reason: reason, At: f.clock.Now()}); err != nil {
		if r, lerr := f.engine.Load(ctx, runID); lerr == nil {
			req.Channel, req.Thread = r.Origin.Channel, r.Origin.ThreadTS
		}
		return bot.Tell(f.verdictProblem(err, runID), "Your reason was not saved")
	}
	return nil
}

// recordVerdict saves a verdict and counts it (a reason added to a 👎 is
// not counted again): verdicts on reports and digests, and on follow-up
// answers, each in their own counter.
func (f *Feature) recordVerdict(ctx context.Context, runID string, v pipeline.Verdict) error {
	r, err := f.engine.RecordVerdict(ctx, runID, v)
	if err != nil {
		return err
	}
	if v.Reason == "" {
		f.log.Info("bot: feedback recorded", "run_id", r.ID, "on", v.On, "user", v.By, "useful", v.Useful)
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
		f.metrics.CounterVec(opts, "verdict").WithLabelValues(verdict).Inc()
	}
	return nil
}

// verdictProblem explains why feedback was not recorded.
func (f *Feature) verdictProblem(err error, runID string) []slack.Block {
	switch {
	case errors.Is(err, pipeline.ErrNoReport):
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" has no report to give feedback on.", "Nothing was recorded.")
	case errors.Is(err, pipeline.ErrNoAnswer):
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" has no such answer to give feedback on.", "Nothing was recorded.")
	case errors.Is(err, pipeline.ErrNotFound):
		return blockkit.RenderRunNotFound(runID)
	}
	f.log.Error("bot: recording feedback failed", "run_id", runID, "err", err)
	return blockkit.RenderError("I couldn't record your feedback because of an internal error.", "Please click again in a minute; nothing was recorded.")
}
