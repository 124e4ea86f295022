package bot

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Steering a research while it runs: a mention of the bot in the thread of
// a run that has not finished (or a reply in its direct-message or
// assistant thread) is a steering note for the run's next steps
// (pipeline.Engine.Steer), acknowledged at once in the thread. A note that
// asks to stop is the cancel flow with its confirmation. Only the requester
// and the channel's approvers may steer; notes are bounded in count and
// length by the engine and rated per run here. A run that waits at a
// checkpoint takes the note too: it applies after the decision.

// Steerer is what steering needs of the engine (*pipeline.Engine).
type Steerer interface {
	Steer(ctx context.Context, runID, by, text string) (*pipeline.Run, pipeline.SteeringNote, error)
}

// SteeringConfig configures the steering notes of an App.
type SteeringConfig struct {
	// Steerer takes steering notes for unfinished runs (the assembly
	// passes the Engine); nil treats every mention in a run's thread as a
	// follow-up question.
	Steerer Steerer
	// Limit bounds the steering notes one running research takes (zero:
	// 3 per minute); the count and length of notes are the engine's
	// bounds.
	Limit Limit
}

// defaultSteeringLimit is the per-run rate of steering notes when
// SteeringConfig.Limit is zero.
var defaultSteeringLimit = Limit{Rate: 3, Period: time.Minute}

// isStopRequest reports whether text asks to stop the run
// (pipeline.IsStopRequest, shared with the terminal).
func isStopRequest(text string) bool { return pipeline.IsStopRequest(text) }

// steer takes m as a steering note when the thread's run has not finished;
// it reports false for a finished run (m is then a follow-up question).
func (a *App) steer(ctx context.Context, req *Request, m Mention, runID string) (bool, error) {
	st := a.cfg.Steering.Steerer
	if st == nil {
		return false, nil
	}
	r, err := a.engine.Load(ctx, runID)
	if err != nil {
		if errors.Is(err, pipeline.ErrNotFound) {
			return false, nil // the follow-up path says so
		}
		return true, err
	}
	if r.Status.Final() || r.Report != nil {
		return false, nil
	}
	if !a.allowed(r, m.User) {
		return true, Tell(blockkit.SteeringNotAllowed(r), "Not allowed")
	}
	switch {
	case m.Text == "":
		return true, Tell(blockkit.SteeringEmpty(), "How should I steer it?")
	case isStopRequest(m.Text):
		req.Reply(ctx, blockkit.RenderCancelConfirm(r), "Cancel this run?")
		return true, nil
	}
	if n := utf8.RuneCountInString(m.Text); n > pipeline.MaxSteeringNoteRunes {
		return true, Tell(blockkit.SteeringTooLong(n), "Note too long")
	}
	if len(r.Notes) >= pipeline.MaxSteeringNotes {
		return true, Tell(blockkit.SteeringTooMany(), "Too many notes")
	}
	if err := a.allowSteering(ctx, r.ID); err != nil {
		return true, err
	}
	r, note, err := st.Steer(ctx, r.ID, m.User, m.Text)
	switch {
	case errors.Is(err, pipeline.ErrRunFinished):
		return true, Tell(blockkit.SteeringFinished(r), "Run finished")
	case errors.Is(err, pipeline.ErrTooManyNotes):
		return true, Tell(blockkit.SteeringTooMany(), "Too many notes")
	case errors.Is(err, pipeline.ErrNoteTooLong):
		return true, Tell(blockkit.SteeringTooLong(utf8.RuneCountInString(m.Text)), "Note too long")
	case errors.Is(err, pipeline.ErrEmptyNote):
		return true, Tell(blockkit.SteeringEmpty(), "How should I steer it?")
	case err != nil:
		req.Log.Error("bot: recording a steering note failed", "run_id", runID, "err", err)
		return true, Tell(blockkit.RenderError("I couldn't record your note; nothing was changed.", "Please send it again in a minute."), "Not recorded")
	}
	req.Log.Info("bot: steering note recorded", "run_id", r.ID, "notes", len(r.Notes))
	_, err = a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderSteeringNoted(note, len(r.Notes), r.Status == pipeline.StatusWaiting), blockkit.SteeringNotedText(note))
	return true, err
}

// allowSteering takes one note from the run's budget (key steer:<run id>).
func (a *App) allowSteering(ctx context.Context, runID string) error {
	l := a.cfg.Steering.Limit
	if l.Rate <= 0 || l.Period <= 0 {
		l = defaultSteeringLimit
	}
	wait, err := a.cfg.Budget.Allow(ctx, "steer:"+runID, l.Rate, l.Period)
	if err != nil {
		return err
	}
	if wait > 0 {
		a.metrics.limited("steering")
		wait = max(wait.Round(time.Second), time.Second)
		return Tell(blockkit.SteeringTooFast(l.Rate, periodName(l.Period), blockkit.Duration(wait)), "Rate limited")
	}
	return nil
}
