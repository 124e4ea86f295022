// Package steering is steering a research while it runs, a feature of the
// bot: a mention of the bot in the thread of a run that has not finished
// (or a reply in its direct-message or assistant thread) is a steering note
// for the run's next steps (pipeline.Engine.Steer), acknowledged at once in
// the thread. A note that asks to stop is the cancel flow with its
// confirmation. Only the requester and the channel's approvers may steer
// (bot.Request.MayDecide); notes are bounded in count and length by the
// engine and rated per run here. A run that waits at a checkpoint takes the
// note too: it applies after the decision.
//
// It plugs into the transport (package bot) as the App's
// bot.Config.Steering (a bot.RunMessageHandler, asked before follow-up
// questions) and renders with bot/blockkit; bot does not import it: the
// assembly (internal/app/roles) builds a Feature and plugs it in.
package steering

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what steering needs of the research engine (*pipeline.Engine).
type Engine interface {
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
	Steer(ctx context.Context, runID, by, text string) (*pipeline.Run, pipeline.SteeringNote, error)
}

// The per-run rate of steering notes when Config.Limit is zero: 3 a minute.
const (
	defaultRate   = 3
	defaultPeriod = time.Minute
)

// Config configures a Feature. Engine, Budget and the Kit's Sender are
// required.
type Config struct {
	Engine Engine
	// Budget keeps the per-run rate of steering notes (the App's
	// bot.Config.Budget).
	Budget bot.RateBudget
	// Limit bounds the steering notes one running research takes (zero:
	// 3 per minute); the count and length of notes are the engine's
	// bounds.
	Limit bot.Limit
	// Kit is the transport's Sender, metrics (the notes refused by the
	// rate are counted there), logger and clock.
	bot.Kit
}

// Feature takes steering notes for unfinished runs.
type Feature struct {
	engine  Engine
	budget  bot.RateBudget
	limit   bot.Limit
	send    *bot.Sender
	metrics *bot.Metrics
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: steering needs",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil},
		bot.Need{Name: "a rate budget", Present: cfg.Budget != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, budget: cfg.Budget, limit: cfg.Limit.Or(bot.Limit{Rate: defaultRate, Period: defaultPeriod}), metrics: kit.Metrics, send: kit.Sender}, nil
}

// HandleRunMessage takes m as a steering note when run runID has not
// finished; it reports false for a finished run (m is then a follow-up
// question) and for a run the engine no longer knows (the follow-ups say
// so).
func (f *Feature) HandleRunMessage(ctx context.Context, req *bot.Request, m bot.Mention, runID string) (bool, error) {
	r, err := f.engine.Load(ctx, runID)
	if err != nil {
		if errors.Is(err, pipeline.ErrNotFound) {
			return false, nil // the follow-up path says so
		}
		return true, err
	}
	if r.Status.Final() || r.Report != nil {
		return false, nil
	}
	if !req.MayDecide(r) {
		return true, bot.Tell(blockkit.SteeringNotAllowed(r), "Not allowed")
	}
	switch {
	case m.Text == "":
		return true, bot.Tell(blockkit.SteeringEmpty(), "How should I steer it?")
	case pipeline.IsStopRequest(m.Text): // shared with the terminal and the clarifications
		req.Reply(ctx, blockkit.RenderCancelConfirm(r), "Cancel this run?")
		return true, nil
	}
	if n := utf8.RuneCountInString(m.Text); n > pipeline.MaxSteeringNoteRunes {
		return true, bot.Tell(blockkit.SteeringTooLong(n), "Note too long")
	}
	if len(r.Notes) >= pipeline.MaxSteeringNotes {
		return true, bot.Tell(blockkit.SteeringTooMany(), "Too many notes")
	}
	if err := f.allow(ctx, r.ID); err != nil {
		return true, err
	}
	r, note, err := f.engine.Steer(ctx, r.ID, m.User, m.Text)
	switch {
	case errors.Is(err, pipeline.ErrRunFinished):
		return true, bot.Tell(blockkit.SteeringFinished(r), "Run finished")
	case errors.Is(err, pipeline.ErrTooManyNotes):
		return true, bot.Tell(blockkit.SteeringTooMany(), "Too many notes")
	case errors.Is(err, pipeline.ErrNoteTooLong):
		return true, bot.Tell(blockkit.SteeringTooLong(utf8.RuneCountInString(m.Text)), "Note too long")
	case errors.Is(err, pipeline.ErrEmptyNote):
		return true, bot.Tell(blockkit.SteeringEmpty(), "How should I steer it?")
	case err != nil:
		req.Log.Error("bot: recording a steering note failed", "run_id", runID, "err", err)
		return true, bot.Tell(blockkit.RenderError("I couldn't record your note; nothing was changed.", "Please send it again in a minute."), "Not recorded")
	}
	req.Log.Info("bot: steering note recorded", "run_id", r.ID, "notes", len(r.Notes))
	_, err = f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderSteeringNoted(note, len(r.Notes), r.Status == pipeline.StatusWaiting), blockkit.SteeringNotedText(note))
	return true, err
}

// allow takes one note from the run's budget (key steer:<run id>).
func (f *Feature) allow(ctx context.Context, runID string) error {
	l := f.limit
	wait, err := l.Take(ctx, f.budget, "steer:"+runID)
	if err != nil {
		return err
	}
	if wait > 0 {
		f.metrics.Limited("steering")
		return bot.Tell(blockkit.SteeringTooFast(l.Rate, bot.PeriodName(l.Period), blockkit.Duration(wait)), "Rate limited")
	}
	return nil
}
