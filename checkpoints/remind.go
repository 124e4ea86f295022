package checkpoints

import (
	"errors"
	"fmt"
	"time"
)

// Remind records a reminder of a timed-out instance whose automatic re-offers
// (MaxRetries) are used up: it stays timed_out — answerable, and waivable by
// an admin — but counts another attempt and gets a new deadline, now+Timeout,
// so it is reminded again at the same interval for as long as it waits. An
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
	in.DeadlineAt = now.Add(in.Timeout)
	in.record(now, actorSystem, StateTimedOut, fmt.Sprintf("reminded (attempt %d)", in.Attempt), nil)
	return nil
}
