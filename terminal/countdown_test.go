package terminal

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
)

// TestPromptShowsTimeLeftToTheDeadline: the line above the prompt says the
// time left as of the prompter's clock, counted again when the prompt is
// asked again, and what happens at the deadline.
func TestPromptShowsTimeLeftToTheDeadline(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, map[string]any{}, nil)
	inst.DeadlineAt = now.Add(3*time.Hour + 20*time.Minute)
	clock := quartz.NewMock(t)
	clock.Set(now)
	var out strings.Builder
	p := NewPrompter(strings.NewReader("maybe\napprove\n"), &out)
	p.Clock = steppingClock{clock, 3*time.Hour + 19*time.Minute + 30*time.Second}
	if _, err := p.Ask(context.Background(), inst, nil); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	first := "Time left: 3 h 20 min — a reminder is due at 13:20\n[a]pprove / [e]dit / [r]eject? "
	again := "Time left: less than a minute — a reminder is due at 13:20\n[a]pprove / [e]dit / [r]eject? "
	if !strings.Contains(got, first) || !strings.Contains(got, again) {
		t.Errorf("the prompt does not count down:\n%s", got)
	}
}

// TestCountdownTextAtTheEdges: a self-approving checkpoint says so; a
// deadline past says it passed; one days away names the date.
func TestCountdownTextAtTheEdges(t *testing.T) {
	inst := checkpoints.Instance{DeadlineAt: now.Add(2*24*time.Hour + 5*time.Hour)}
	for _, c := range []struct {
		policy checkpoints.TimeoutPolicy
		at     time.Time
		want   string
	}{
		{checkpoints.TimeoutApprove, now, "Time left: 2 days 5 h — it approves itself at 2026-11-23 15:00 if nobody decides"},
		{checkpoints.TimeoutRemind, now, "Time left: 2 days 5 h — a reminder is due at 2026-11-23 15:00"},
		{checkpoints.TimeoutApprove, inst.DeadlineAt.Add(-30 * time.Second), "Time left: less than a minute — it approves itself at 15:00 if nobody decides"},
		{checkpoints.TimeoutApprove, inst.DeadlineAt, "Deadline passed at 15:00 — it approves itself any moment now if nobody decides"},
		{checkpoints.TimeoutRemind, inst.DeadlineAt.Add(time.Hour), "Deadline passed at 15:00 — a reminder is due"},
	} {
		inst.OnTimeout = c.policy
		if got := CountdownText(inst, c.at); got != c.want {
			t.Errorf("CountdownText(%q, deadline%+v) = %q, want %q", c.policy, c.at.Sub(inst.DeadlineAt), got, c.want)
		}
	}
	if got := (&Prompter{}).countdown(checkpoints.Instance{}); got != "" {
		t.Errorf("no deadline, yet the prompt says %q", got)
	}
}

// steppingClock is a mock clock that moves on by step each time it is read.
type steppingClock struct {
	*quartz.Mock
	step time.Duration
}

// Now returns the clock's time, then advances it by step.
func (c steppingClock) Now(tags ...string) time.Time {
	t := c.Mock.Now(tags...)
	c.Advance(c.step)
	return t
}
