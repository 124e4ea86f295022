package terminal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/researchbot/researchbot/pipeline"
)

// Steering a run from the terminal: while the run works (no checkpoint
// prompt is up), a line the person types is a steering note for the run's
// next steps (pipeline.Engine.Steer), acknowledged at once; a line that
// asks to stop ("stop", "cancel") is a cancel, after a yes/no confirmation,
// as a mention in Slack is. Notes are bounded by the engine (count and
// length); the terminal's person is the run's requester, so there is no
// one else to refuse.

// Steerer is what steering needs of the engine (*pipeline.Engine).
type Steerer interface {
	Steer(ctx context.Context, runID, by, text string) (*pipeline.Run, pipeline.SteeringNote, error)
	Cancel(ctx context.Context, runID, by string) error
}

// SteeringHint tells the person at a terminal how to steer the run.
const SteeringHint = `while it works, type a note and press Enter to steer it ("focus on Europe"), or "stop" to cancel it`

// AwaitWorking waits for the next state of the run from runs, and
// meanwhile takes each line the person types as steering for runID
// (SteerLine). It returns the state, or ok false when runs is closed, or
// ctx's error. When the input ends, it goes on waiting for states only.
func (p *Prompter) AwaitWorking(ctx context.Context, runs <-chan *pipeline.Run, s Steerer, runID string) (r *pipeline.Run, ok bool, err error) {
	for {
		typed := p.input()
		if p.inputEnded {
			typed = nil
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case r, ok := <-runs:
			return r, ok, nil
		case l := <-typed:
			if l.err != nil {
				p.lines = closedInput(l.err)
				p.inputEnded = true
				continue
			}
			if err := p.SteerLine(ctx, s, runID, l.s); err != nil {
				return nil, false, err
			}
		}
	}
}

// SteerLine takes one line typed while the run works: a stop request asks
// for confirmation and cancels the run; any other text is recorded as a
// steering note and acknowledged; an empty line is ignored. Refusals
// (too long, too many, the run finished) are said and change nothing; the
// error returned is ctx's or the input's while confirming.
func (p *Prompter) SteerLine(ctx context.Context, s Steerer, runID, line string) error {
	text := strings.TrimSpace(line)
	if text == "" {
		return nil
	}
	if pipeline.IsStopRequest(text) {
		return p.confirmCancel(ctx, s, runID)
	}
	if n := utf8.RuneCountInString(text); n > pipeline.MaxSteeringNoteRunes {
		p.printf("not noted: that note is %d characters long; a steering note takes at most %d. Say it in a sentence or two.\n", n, pipeline.MaxSteeringNoteRunes)
		return nil
	}
	r, note, err := s.Steer(ctx, runID, p.By, text)
	switch {
	case errors.Is(err, pipeline.ErrTooManyNotes):
		p.printf("not noted: this run already has %d steering notes, as many as it takes. Type \"stop\" to cancel it instead.\n", pipeline.MaxSteeringNotes)
	case errors.Is(err, pipeline.ErrRunFinished):
		p.printf("not noted: the run has already finished.\n")
	case errors.Is(err, pipeline.ErrNoteTooLong), errors.Is(err, pipeline.ErrEmptyNote):
		p.printf("not noted: %v.\n", err)
	case err != nil:
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.printf("not noted: I couldn't record your note (%v); nothing was changed. Type it again in a moment.\n", err)
	default:
		p.printf("%s\n", NotedLine(note, len(r.Notes)))
	}
	return nil
}

// NotedLine acknowledges a steering note, the count-th of the run.
func NotedLine(n pipeline.SteeringNote, count int) string {
	return fmt.Sprintf("noted: %s — applies from the next step (note %d of at most %d)", flat(n.Text), count, pipeline.MaxSteeringNotes)
}

// confirmCancel asks whether to cancel the run, and cancels it on yes.
func (p *Prompter) confirmCancel(ctx context.Context, s Steerer, runID string) error {
	for {
		p.printf("Cancel run %s? It stops at its next step; what it found so far is kept. [y]es / [n]o? ", runID)
		ans, err := p.line(ctx)
		if errors.Is(err, ErrNoInput) {
			p.printf("\nkept running.\n")
			return nil
		}
		if err != nil {
			return err
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			err := s.Cancel(ctx, runID, p.By)
			switch {
			case errors.Is(err, pipeline.ErrRunFinished):
				p.printf("the run has already finished; nothing to cancel.\n")
			case err != nil:
				if ctx.Err() != nil {
					return ctx.Err()
				}
				p.printf("the run could not be cancelled (%v); it goes on. Type \"stop\" to try again.\n", err)
			default:
				p.printf("cancelling: the run stops at its next step.\n")
			}
			return nil
		case "n", "no":
			p.printf("kept running.\n")
			return nil
		}
	}
}

// flat is text on one line, its runs of white space one space.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }
