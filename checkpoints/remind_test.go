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
	for n := 2; n <= 4; n++ {
		now := t0.Add(time.Duration(n-1) * time.Hour)
		if err := in.Remind(now); err != nil {
			t.Fatal(err)
		}
		if in.State != StateTimedOut || in.Attempt != n || !in.DeadlineAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("reminder %d: %s, attempt %d, deadline %v", n, in.State, in.Attempt, in.DeadlineAt)
		}
	}
	none := &Instance{State: StateTimedOut}
	if err := none.Remind(t0); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("remind without a timeout: %v", err)
	}
}
