package terminal

import (
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
)

// countdown is the line shown above the prompt of inst about its
// deadline, as of the Prompter's clock ("Time left: 3 h 20 min — it
// approves itself at 15:00 if nobody decides"); "" when inst has no
// deadline. It is counted each time the prompt is shown.
func (p *Prompter) countdown(inst checkpoints.Instance) string {
	if inst.DeadlineAt.IsZero() {
		return ""
	}
	clock := p.Clock
	if clock == nil {
		clock = quartz.NewReal()
	}
	return CountdownText(inst, clock.Now())
}

// CountdownText says how long until inst's deadline as of now, and what
// happens then: "Time left: 3 h 20 min — it approves itself at 15:00 if
// nobody decides", "Time left: 45 min — a reminder is due at 15:00", or
// once it has passed "Deadline passed at 15:00 — a reminder is due". The
// time of day is in now's time zone, with the date when it is not within
// a day of now.
func CountdownText(inst checkpoints.Instance, now time.Time) string {
	at := inst.DeadlineAt.In(now.Location())
	when := at.Format("15:04")
	if d := at.Sub(now); d >= 24*time.Hour || d <= -24*time.Hour {
		when = at.Format("2006-01-02 15:04")
	}
	left, ok := checkpoints.TimeLeft(inst.DeadlineAt, now)
	switch {
	case inst.OnTimeout == checkpoints.TimeoutApprove && ok:
		return "Time left: " + left + " — it approves itself at " + when + " if nobody decides"
	case inst.OnTimeout == checkpoints.TimeoutApprove:
		return "Deadline passed at " + when + " — it approves itself any moment now if nobody decides"
	case ok:
		return "Time left: " + left + " — a reminder is due at " + when
	}
	return "Deadline passed at " + when + " — a reminder is due"
}
