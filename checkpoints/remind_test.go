package checkpoints

import (
	"errors"
	"testing"
	"time"
)

func TestRemindKeepsATimedOutInstanceWaitingWithANewDeadline(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	in := &Instance{ID: "c1", State: StateOffered, Required: true, Attempt: 1, Timeout: time.Hour, DeadlineAt: t0}
	if err := in.Remind(t0); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("remind an offered instance: %v, want ErrInvalidTransition", err)
	}
	if err := in.TimeOut(t0); err != nil {
		t.Fatal(err)
	}
	// No policy stored (an instance from before policies): the default,
	// backing off ×2 from the timeout.
	now := t0
	for n, gap := range []time.Duration{2 * time.Hour, 4 * time.Hour, 8 * time.Hour} {
		if !in.RemindersLeft() {
			t.Fatalf("no reminders left after %d, want %d", n, DefaultReminderCount)
		}
		if err := in.Remind(now); err != nil {
			t.Fatal(err)
		}
		if in.State != StateTimedOut || in.Attempt != n+2 || in.Reminded != n+1 || !in.DeadlineAt.Equal(now.Add(gap)) {
			t.Fatalf("reminder %d: %s, attempt %d, reminded %d, deadline %v, want %v", n+1, in.State, in.Attempt, in.Reminded, in.DeadlineAt, now.Add(gap))
		}
		now = in.DeadlineAt
	}
	if in.RemindersLeft() {
		t.Fatal("reminders left after the default 3")
	}
	if err := in.StopReminders(now); err != nil {
		t.Fatal(err)
	}
	if in.State != StateTimedOut || !in.DeadlineAt.IsZero() || !in.RemindersStoppedAt.Equal(now) {
		t.Fatalf("stopped: %s, deadline %v, stopped at %v; want timed out, no deadline", in.State, in.DeadlineAt, in.RemindersStoppedAt)
	}
	if err := in.StopReminders(now); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("stop twice: %v, want ErrInvalidTransition", err)
	}
	if err := in.Waive(now, "U1", "forgotten"); err != nil {
		t.Fatalf("an admin cannot skip a checkpoint whose reminders stopped: %v", err)
	}
	none := &Instance{State: StateTimedOut}
	if err := none.Remind(t0); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("remind without a timeout: %v", err)
	}
}
