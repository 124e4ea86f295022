// Package followups is the follow-up questions asked in a research's
// thread, a feature of the bot: once a run has finished, a mention of the
// bot in its thread (or a reply in its direct-message thread) is a question
// answered there from the run's own sources (pipeline.Engine.Ask), rated
// per person; a question the sources do not answer offers "Research this",
// which starts a new research linked to the run (bot.Request.StartResearch).
//
// It plugs into the transport (package bot) as the App's
// bot.Config.FollowUps (a bot.RunMessageHandler, asked after steering) and,
// for the "Research this" button, in bot.Config.Features; it renders with
// bot/blockkit. bot does not import it: the assembly (internal/app/roles)
// builds a Feature and plugs it in. Naming the new run in both threads once
// it starts stays the App's (it is part of starting a run).
package followups

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/coder/quartz"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what follow-up questions need of the research engine
// (*pipeline.Engine).
type Engine interface {
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
	Ask(ctx context.Context, runID, question, by string) (*pipeline.Run, pipeline.FollowUp, error)
}

// How many follow-up questions one person may ask when Config.Limit is
// zero: 20 an hour.
const (
	defaultRate   = 20
	defaultPeriod = time.Hour
)

// Config configures a Feature. Engine, Budget and the Kit's Sender are
// required.
type Config struct {
	Engine Engine
	// Budget keeps the per-person rate of follow-up questions (the App's
	// bot.Config.Budget).
	Budget bot.RateBudget
	// Limit bounds the follow-up questions one person may ask (zero: 20
	// per hour).
	Limit bot.Limit
	// Kit is the transport's Sender, metrics (the answers and refusals are
	// counted there), logger and clock (it dates when a person may ask
	// again).
	bot.Kit
}

// Feature answers follow-up questions in a run's thread.
type Feature struct {
	engine  Engine
	budget  bot.RateBudget
	limit   bot.Limit
	send    *bot.Sender
	metrics *bot.Metrics
	log     *slog.Logger
	clock   quartz.Clock
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: follow-ups need",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil},
		bot.Need{Name: "a rate budget", Present: cfg.Budget != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, budget: cfg.Budget, limit: cfg.Limit.Or(bot.Limit{Rate: defaultRate, Period: defaultPeriod}), metrics: kit.Metrics, log: kit.Logger, clock: kit.Clock, send: kit.Sender}, nil
}

// Register routes the "Research this" button.
func (f *Feature) Register(r *bot.Routes) {
	r.Action(blockkit.ActionResearchFollowUp, f.onResearchFollowUp)
}

// HandleRunMessage answers m as a follow-up question about run runID: it
// takes every message it is given (steering, asked before it, took those
// for unfinished runs).
func (f *Feature) HandleRunMessage(ctx context.Context, req *bot.Request, m bot.Mention, runID string) (bool, error) {
	return true, f.answer(ctx, req, m, runID)
}

// answer answers a follow-up question in the run's thread: a pending
// message at once, edited into the answer (or why there is none).
func (f *Feature) answer(ctx context.Context, req *bot.Request, m bot.Mention, runID string) error {
	if m.Text == "" {
		return bot.Tell(blockkit.RenderError("Ask me a question about this report after the mention.", "For example: _@researchbot what did [3] say about costs?_"), "Ask a question")
	}
	if err := f.allow(ctx, req); err != nil {
		return err
	}
	ts, err := f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderFollowUpPending(m.User, m.Text), "Looking in the report's sources…")
	if err != nil {
		return err
	}
	r, fu, err := f.engine.Ask(ctx, runID, m.Text, m.User)
	if err != nil {
		blocks := f.problem(err, runID)
		if uerr := f.send.Update(ctx, m.Channel, ts, append(blockkit.RenderFollowUpPending(m.User, m.Text)[:1], blocks...), "Not answered"); uerr != nil {
			req.Log.Warn("bot: showing a follow-up failure failed", "err", uerr)
		}
		return nil
	}
	outcome := "not_answered"
	if fu.Answered {
		outcome = "answered"
	}
	f.metrics.CounterVec(prometheus.CounterOpts{
		Name: "researchbot_follow_ups_total",
		Help: "Follow-up questions answered in research threads, by outcome (answered from the sources or not)."}, "outcome").WithLabelValues(outcome).Inc()
	req.Log.Info("bot: follow-up answered", "run_id", r.ID, "follow_up", fu.ID, "answered", fu.Answered)
	return f.send.Update(ctx, m.Channel, ts, blockkit.RenderFollowUp(r.Report, fu), blockkit.FollowUpText(fu))
}

// allow takes one follow-up from the person's budget (key
// ask:<team>:<user>).
func (f *Feature) allow(ctx context.Context, req *bot.Request) error {
	l := f.limit
	wait, err := l.Take(ctx, f.budget, "ask:"+req.TeamID+":"+req.UserID)
	if err != nil {
		return err
	}
	if wait > 0 {
		f.metrics.Limited("follow_up")
		return bot.Tell(blockkit.RenderError(limitMessage(l, wait, f.clock.Now()), ""), "Rate limited")
	}
	return nil
}

// limitMessage explains a refused follow-up and when to ask again.
func limitMessage(l bot.Limit, wait time.Duration, now time.Time) string {
	return "You have asked as many follow-up questions as allowed (" + blockkit.Count(l.Rate) + " per " + bot.PeriodName(l.Period) + "). Ask again in " + blockkit.Duration(wait) + " (" + blockkit.SlackDate(now.Add(wait)) + ")."
}

// problem explains a follow-up that could not be answered.
func (f *Feature) problem(err error, runID string) []slack.Block {
	var inv *pipeline.InvalidRequestError
	switch {
	case errors.Is(err, pipeline.ErrNoReport):
		return blockkit.RenderError("This run has no report yet, so there are no sources to answer from.", "Ask again once the report is posted in this thread.")
	case errors.As(err, &inv):
		return blockkit.RenderError(blockkit.EscapeTruncate(strings.Join(inv.Problems, "; "), 500)+".", "")
	case errors.Is(err, pipeline.ErrNotFound):
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" no longer exists, so I can't answer from its sources.", "")
	}
	f.log.Error("bot: answering a follow-up failed", "run_id", runID, "err", err)
	return blockkit.RenderError("I couldn't answer this: the model or my storage did not answer.", "Please ask again in a minute.")
}

// onResearchFollowUp starts a run for a follow-up the sources did not
// answer, in a new thread of the parent's channel, linked both ways.
func (f *Feature) onResearchFollowUp(ctx context.Context, req *bot.Request) error {
	fid := req.Action.Value
	parent, err := f.engine.Load(ctx, pipeline.FollowUpRun(fid))
	var fu *pipeline.FollowUp
	if err == nil {
		fu = parent.FollowUpByID(fid)
	}
	if fu == nil {
		return bot.Tell(blockkit.RenderError("I can't find this follow-up question any more.", "Start a new research with `/research &lt;question&gt;`."), "Not found")
	}
	if fu.Child == "" {
		req.StartResearch(ctx, parent.Origin.Channel, bot.Command{Kind: bot.CmdResearch, Question: fu.Question, Mode: parent.Mode, Depth: parent.Depth, FollowUpOf: fid})
		if parent, err = f.engine.Load(ctx, parent.ID); err != nil {
			return err
		}
		fu = parent.FollowUpByID(fid)
	}
	if fu == nil || fu.Child == "" {
		return nil // StartResearch said why
	}
	// The answer now names the run instead of offering the button.
	if cb := req.Callback; cb != nil && cb.Message.Timestamp != "" {
		if err := f.send.Update(ctx, req.Channel, cb.Message.Timestamp, blockkit.RenderFollowUp(parent.Report, *fu), blockkit.FollowUpText(*fu)); err != nil {
			req.Log.Warn("bot: collapsing the Research this button failed", "err", err)
		}
	}
	return nil
}
