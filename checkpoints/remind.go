package checkpoints

import (
	"errors"
	"fmt"
	"time"
)

// Remind records a reminder of a timed-out instance whose automatic re-offers
// (MaxRetries) are used up: it stays timed_out — answerable, and waivable by
// an admin — but counts another attempt and another reminder, and gets a new
// deadline, now plus its reminder policy's backed-off gap, when it is
// reminded again or, its reminders used up, escalated (StopReminders). An
// instance without a timeout, or in any other state, returns
// ErrInvalidTransition.
func (in *Instance) Remind(now time.Time) error {
	switch in.State {
	case StateTimedOut:
	case StateSubmitted, StateCollapsed:
		return refuse("remind", in.State, ErrAlreadyDecided)
	default:
		return refuse("remind", in.State, nil)
	}
	if in.Timeout <= 0 {
		return refuse("remind", in.State, errors.New("it has no timeout"))
	}
	in.Attempt++
	in.Reminded++
	in.DeadlineAt = now.Add(in.ReminderPolicy().Gap(in.Timeout, in.Reminded))
	in.record(now, actorSystem, StateTimedOut, fmt.Sprintf("reminded (attempt %d)", in.Attempt), nil)
	return nil
}
