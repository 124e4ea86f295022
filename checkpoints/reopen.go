package checkpoints

import "time"

// Reopen opens a timed-out or failed instance again because a person is
// answering it: timed_out|failed → offered, whatever MaxRetries says
// (MaxRetries bounds automatic reminders, not people). The reopened instance
// has no deadline. A timeout is never a rejection, so the person's answer
// counts.
func (in *Instance) Reopen(now time.Time, actor string) error {
	switch in.State {
	case StateTimedOut, StateFailed:
	case StateSubmitted, StateCollapsed:
		return refuse("reopen", in.State, ErrAlreadyDecided)
	default:
		return refuse("reopen", in.State, nil)
	}
	in.Attempt++
	in.OfferedAt = now
	in.DeadlineAt = time.Time{}
	in.record(now, actor, StateOffered, "reopened by a person", nil)
	return nil
}
