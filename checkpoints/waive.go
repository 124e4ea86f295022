package checkpoints

import (
	"strings"
	"time"
)

// Waive passes over a required instance that people could not be asked
// (it failed, or timed out with its reminders used up): an admin's
// "continue without it". failed or timed_out → skipped, with the admin and
// the reason in the audit trail. Optional instances are skipped with Skip.
func (in *Instance) Waive(now time.Time, admin, reason string) error {
	switch in.State {
	case StateFailed, StateTimedOut:
	case StateSubmitted, StateCollapsed, StateSkipped:
		return refuse("continue without", in.State, ErrAlreadyDecided)
	default:
		return refuse("continue without", in.State, ErrNotOpen)
	}
	note := "continued without it by an admin"
	if r := strings.TrimSpace(reason); r != "" {
		note += ": " + r
	}
	in.record(now, admin, StateSkipped, note, nil)
	return nil
}

// Retry lets a failed instance be offered once more, because a person asked:
// its attempts so far no longer count against MaxRetries (which bounds
// automatic retries, not people).
func (in *Instance) Retry() error {
	if in.State != StateFailed {
		return refuse("retry", in.State, ErrNotOpen)
	}
	in.MaxRetries = max(in.MaxRetries, in.Attempt)
	return nil
}
