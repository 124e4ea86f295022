// Package terminal presents a research run in a terminal: progress lines on
// stderr, each checkpoint rendered as text with an approve / edit / reject
// prompt, and the final report handed back to the command. Everything it
// prints that came from people, web pages or the model passes Clean first,
// so no escape sequence, control or bidi character in it reaches the
// terminal.
//
// The terminal follows its run in the store (Follower), not the engine of
// its own process: whichever process advances the run, the terminal shows
// its progress and checkpoints and sees it finish.
package terminal

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Presenter implements pipeline.Presenter for runs started in a terminal,
// for the engine of the terminal's own process. What the run does is shown
// by the Follower from the store; the Presenter only shows the passing
// notes the store does not keep (Notice): a model call being
// retried, a step tried again.
type Presenter struct {
	mu  sync.Mutex
	out io.Writer
}

var _ pipeline.Presenter = (*Presenter)(nil)

// New returns a Presenter writing notes to out.
func New(out io.Writer) *Presenter { return &Presenter{out: out} }

// Offer does nothing: the Follower asks the person.
func (p *Presenter) Offer(context.Context, *pipeline.Run, *checkpoints.Instance) error { return nil }

// Decided does nothing: the Follower prints the decision.
func (p *Presenter) Decided(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}

// Progress does nothing: the Follower prints progress from the store.
func (p *Presenter) Progress(context.Context, *pipeline.Run) {}

// Finished does nothing: the command prints the outcome it follows.
func (p *Presenter) Finished(context.Context, *pipeline.Run) error { return nil }

// FinishesSilently reports that Finished shows nothing
// (pipeline.SilentFinisher): the engine saves a run's end as shown.
func (p *Presenter) FinishesSilently() bool { return true }

// Notice prints a passing note ("the model is not answering (retry 2 of 4 in 8s)").
func (p *Presenter) Notice(_ context.Context, _ *pipeline.Run, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.out, "  … "+Clean(text))
}

// Stranded does nothing: Offer never fails, so a terminal run's checkpoint
// is never stranded.
func (p *Presenter) Stranded(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}

// BreakerTripped does nothing: Offer never fails, so a terminal run never
// trips a breaker.
func (p *Presenter) BreakerTripped(context.Context, checkpoints.Definition, int) error {
	return nil
}

// RemindersStopped says that a checkpoint's reminders are used up
// (pipeline.Presenter): a terminal run has nobody else to tell, so
// it says the run still waits and how to decide or skip it.
func (p *Presenter) RemindersStopped(_ context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.out, "  … "+Clean(remindersStoppedLine(r.ID, inst)))
	return nil
}

// remindersStoppedLine says that inst's reminders have stopped, and how to
// decide or skip it.
func remindersStoppedLine(runID string, inst *checkpoints.Instance) string {
	return fmt.Sprintf("reminders for %q have stopped after %d; the run is still waiting: decide here, or skip it with `researchbot checkpoints skip %s %s`",
		inst.Label, inst.Reminded, runID, inst.ID)
}
