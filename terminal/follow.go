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
	lost     map[string]bool // checkpoints asked again after a loss, warned of and not decided since
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
	return &Follower{out: out, clock: clock, interval: interval, asked: map[string]int{}, open: map[string]bool{}, closed: map[string]bool{}, lost: map[string]bool{}}
}

// Observe shows what changed in r and returns the checkpoint the person
// should answer now, or nil. A checkpoint is returned once per offer (a
// reminder after a timeout is a new offer). A checkpoint asked again
// because the store lost a later decision (pipeline.Run.LostAt) is
// preceded by a warning line saying so and asked again even if it was
// answered here before: once per loss (until it is decided again).
func (f *Follower) Observe(r *pipeline.Run) *checkpoints.Instance {
	if inst := r.Current(); inst != nil && !r.Status.Final() && r.LostAt(inst) && (inst.Open() || inst.State == checkpoints.StateTimedOut) {
		if !f.lost[inst.ID] { // the same loss marked again while it is asked changes nothing here
			f.lost[inst.ID] = true
			delete(f.asked, inst.ID)
			delete(f.closed, inst.ID)
			fmt.Fprintln(f.out, f.Style.Text(lostLine(r, inst)))
		}
	}
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
		delete(f.lost, inst.ID) // decided: a later loss is warned of again
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

// lostLine is the warning printed when the run asks again for a decision
// the store lost (its state went back in time).
func lostLine(r *pipeline.Run, inst *checkpoints.Instance) string {
	found := ""
	if r.LostDecision != nil && !r.LostDecision.At.IsZero() {
		found = " (found at " + r.LostDecision.At.Local().Format("15:04:05") + ")"
	}
	return Clean(fmt.Sprintf("⚠ An earlier decision on %q was lost when the run's storage was restored%s: it must be made again.", inst.Label, found))
}
