// Package terminal presents a research run in a terminal: progress lines on
// stderr, each checkpoint rendered as text with an approve / edit / reject
// prompt, and the final report handed back to the command. Everything it
// prints that came from people, web pages or the model passes Clean first,
// so no escape sequence, control or bidi character in it reaches the
// terminal.
package terminal

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Offer is a checkpoint waiting for the person at the terminal.
type Offer struct {
	Run      *pipeline.Run
	Instance checkpoints.Instance
}

// Presenter implements pipeline.Presenter for runs started in a terminal.
// Offer and Finished hand their run to the command's loop over channels, so
// no worker ever blocks on a person.
type Presenter struct {
	out      io.Writer
	now      func() time.Time
	interval time.Duration
	offers   chan Offer
	done     chan *pipeline.Run

	mu   sync.Mutex
	last time.Time
	step pipeline.Step
}

// New returns a Presenter writing progress to out.
func New(out io.Writer, now func() time.Time) *Presenter {
	if now == nil {
		now = time.Now
	}
	return &Presenter{out: out, now: now, interval: 2 * time.Second, offers: make(chan Offer, 4), done: make(chan *pipeline.Run, 1)}
}

// Offers delivers checkpoints to answer.
func (p *Presenter) Offers() <-chan Offer { return p.offers }

// Done delivers the run when it has finished.
func (p *Presenter) Done() <-chan *pipeline.Run { return p.done }

// Offer hands the checkpoint to the command's loop.
func (p *Presenter) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	select {
	case p.offers <- Offer{Run: r, Instance: *inst}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Decided prints a one-line record of the decision.
func (p *Presenter) Decided(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	_, err := fmt.Fprintln(p.out, DecisionLine(inst))
	return err
}

// Progress prints a status line when the stage changes, at most every interval otherwise.
func (p *Presenter) Progress(_ context.Context, r *pipeline.Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if r.Step == p.step && now.Sub(p.last) < p.interval {
		return
	}
	p.step, p.last = r.Step, now
	fmt.Fprintln(p.out, ProgressLine(r, now))
}

// Finished hands the finished run to the command's loop, its report's
// Markdown cleaned of terminal escapes and bidi controls (CleanMarkdown),
// since the report is printed or written to a file next.
func (p *Presenter) Finished(ctx context.Context, r *pipeline.Run) error {
	if r.Report != nil {
		c, report := *r, *r.Report
		report.Markdown = CleanMarkdown(report.Markdown)
		c.Report = &report
		r = &c
	}
	select {
	case p.done <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
