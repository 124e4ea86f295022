package terminal

import (
	"fmt"
	"io"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Follower turns the states of a run, as read from the store, into what the
// person at the terminal sees: a progress line when the stage changes (and
// at most every interval otherwise), a one-line record of each checkpoint
// decided or skipped, and the checkpoint to ask about.
type Follower struct {
	// Style wraps and colours what is printed (the zero Style: plain).
	Style Style

	out      io.Writer
	clock    quartz.Clock
	interval time.Duration

	lastLine time.Time
	step     pipeline.Step
	status   pipeline.Status
	reached  int             // the furthest stage shown: the bar never goes back on a revision
	asked    map[string]int  // checkpoint id → attempt asked
	open     map[string]bool // checkpoints seen before they were decided
	closed   map[string]bool // checkpoints whose outcome was printed
}

// progressWriter shows a progress line in place (Screen on a terminal).
type progressWriter interface{ Progress(line string) }

// NewFollower returns a Follower writing to out. When out is a Screen on a
// terminal, progress is one line redrawn at every change. clock paces the
// progress lines; nil means the real clock.
func NewFollower(out io.Writer, clock quartz.Clock) *Follower {
	if clock == nil {
		clock = quartz.NewReal()
	}
	interval := 2 * time.Second
	if s, ok := out.(*Screen); ok && s.TTY() {
		interval = 0
	}
	return &Follower{out: out, clock: clock, interval: interval, asked: map[string]int{}, open: map[string]bool{}, closed: map[string]bool{}}
}

// Observe shows what changed in r and returns the checkpoint the person
// should answer now, or nil. A checkpoint is returned once per offer (a
// reminder after a timeout is a new offer).
func (f *Follower) Observe(r *pipeline.Run) *checkpoints.Instance {
	for i := range r.Checkpoints {
		inst := &r.Checkpoints[i]
		if f.closed[inst.ID] {
			continue
		}
		if !inst.Final() && inst.State != checkpoints.StateSkipped {
			f.open[inst.ID] = true
			continue
		}
		f.closed[inst.ID] = true
		if f.open[inst.ID] {
			fmt.Fprintln(f.out, f.Style.Text(DecisionLine(inst)))
		}
	}
	now := f.clock.Now()
	if !r.Status.Final() && (r.Step != f.step || r.Status != f.status || now.Sub(f.lastLine) >= f.interval) {
		f.reached = max(f.reached, stageIndex(r))
		line := f.Style.Progress(progressLine(r, f.reached))
		if p, ok := f.out.(progressWriter); ok {
			p.Progress(line)
		} else {
			fmt.Fprintln(f.out, line)
		}
		f.lastLine = now
	}
	f.step, f.status = r.Step, r.Status
	inst := r.Current()
	if inst == nil || r.Status.Final() {
		return nil
	}
	if !inst.Open() && inst.State != checkpoints.StateTimedOut {
		return nil
	}
	if f.asked[inst.ID] == inst.Attempt {
		return nil
	}
	f.asked[inst.ID] = inst.Attempt
	return inst
}
