package bot

import (
	"context"
	"errors"
	"strings"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Answering clarifying questions by mention: while a run waits at its
// clarify checkpoint (the planner's questions before the plan), a mention
// of the bot in the run's thread by someone who may decide it is the
// answer, in one message: it is recorded as the checkpoint's Answer
// decision (pipeline.ClarifyReply) and acknowledged in the thread, and the
// run plans with it. "stop" still cancels (with confirmation), and anyone
// else is told who may answer. Any other mention is left to steering and
// follow-up questions.

// answerClarify takes m as the answers to the clarifying questions the
// thread's run waits on; it reports false when the run does not wait at
// its clarify checkpoint.
func (a *App) answerClarify(ctx context.Context, req *Request, m Mention, runID string) (bool, error) {
	r, err := a.engine.Load(ctx, runID)
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
	case isStopRequest(text):
		return false, nil // steering asks to confirm the cancel
	case !a.allowed(r, m.User):
		return true, notAllowedToAnswer(r)
	case text == "":
		return true, Tell(blockkit.RenderError("Mention me with your answers after the mention, in one message.", "Or click *Answer* on the questions above; *Skip* plans on the stated assumptions."), "Answer the questions")
	}
	d := checkpoints.Decision{Action: checkpoints.Edit, Values: pipeline.ClarifyReply(inst, text), By: m.User, At: a.now()}
	ctx, err = a.decide(ctx, req, r, inst.ID, d)
	if err != nil {
		return true, err
	}
	_, err = a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderClarifyAnswered(m.User), blockkit.ClarifyAnsweredText)
	return true, err
}

// notAllowedToAnswer tells a person who may not decide the run's
// checkpoints that their answer was not taken.
func notAllowedToAnswer(r *pipeline.Run) error {
	return Tell(blockkit.RenderError("Only "+blockkit.Who(r.RequestedBy)+", who started this research, and this channel's approvers can answer its questions.",
		"Your message was not passed on."), "Not allowed")
}

// isStopRequest reports whether text asks to stop the run
// (pipeline.IsStopRequest, shared with the terminal and bot/steering).
func isStopRequest(text string) bool { return pipeline.IsStopRequest(text) }
