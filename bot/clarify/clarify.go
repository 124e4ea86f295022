// Package clarify is answering a research's clarifying questions by
// mention, a feature of the bot: while a run waits at its clarify
// checkpoint (the planner's questions before the plan), a mention of the
// bot in the run's thread by someone who may decide it
// (bot.Request.MayDecide) is the answer, in one message: it is recorded as
// the checkpoint's Answer decision (pipeline.ClarifyReply, through
// bot.Request.Decide) and acknowledged in the thread, and the run plans
// with it. "stop" still cancels (steering asks to confirm), and anyone else
// is told who may answer. Any other mention is left to steering and
// follow-up questions.
//
// It plugs into the transport (package bot) as the App's
// bot.Config.Clarify (a bot.RunMessageHandler, asked before steering) and
// renders with bot/blockkit; bot does not import it: the assembly
// (internal/app/roles) builds a Feature and plugs it in. The Answer and
// Skip buttons of the questions' message are checkpoint buttons, the App's.
package clarify

import (
	"context"
	"errors"
	"strings"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what the feature needs of the research engine
// (*pipeline.Engine); the decision itself goes through the App
// (bot.Request.Decide).
type Engine interface {
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
}

// Config configures a Feature. Engine and the Kit's Sender are
// required.
type Config struct {
	Engine Engine
	// Kit is the transport's Sender, metrics, logger and clock (it dates
	// the decisions).
	bot.Kit
}

// Feature takes answers to clarifying questions given by mention.
type Feature struct {
	engine Engine
	send   *bot.Sender
	clock  quartz.Clock
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: clarify needs",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, send: kit.Sender, clock: kit.Clock}, nil
}

// HandleRunMessage takes m as the answers to the clarifying questions run
// runID waits on; it reports false when the run does not wait at its
// clarify checkpoint.
func (f *Feature) HandleRunMessage(ctx context.Context, req *bot.Request, m bot.Mention, runID string) (bool, error) {
	r, err := f.engine.Load(ctx, runID)
	if err != nil {
		if errors.Is(err, pipeline.ErrNotFound) {
			return false, nil // the follow-up path says so
		}
		return true, err
	}
	inst := r.Current()
	if inst == nil || inst.DefinitionID != checkpoints.Clarify || !inst.Open() || r.Status.Final() {
		return false, nil
	}
	text := strings.TrimSpace(m.Text)
	switch {
	case pipeline.IsStopRequest(text):
		return false, nil // steering asks to confirm the cancel
	case !req.MayDecide(r):
		return true, notAllowedToAnswer(r)
	case text == "":
		return true, bot.Tell(blockkit.RenderError("Mention me with your answers after the mention, in one message.", "Or click *Answer* on the questions above; *Skip* plans on the stated assumptions."), "Answer the questions")
	}
	d := checkpoints.Decision{Action: checkpoints.Edit, Values: pipeline.ClarifyReply(inst, text), By: m.User, At: f.clock.Now()}
	ctx, err = req.Decide(ctx, r, inst.ID, d)
	if err != nil {
		return true, err
	}
	_, err = f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderClarifyAnswered(m.User), blockkit.ClarifyAnsweredText)
	return true, err
}

// notAllowedToAnswer tells a person who may not decide the run's
// checkpoints that their answer was not taken.
func notAllowedToAnswer(r *pipeline.Run) error {
	return bot.Tell(blockkit.RenderError("Only "+blockkit.Who(r.RequestedBy)+", who started this research, and this channel's approvers can answer its questions.",
		"Your message was not passed on."), "Not allowed")
}
