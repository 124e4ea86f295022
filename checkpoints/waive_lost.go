package checkpoints

import (
	"strings"
	"time"
)

// WaiveLost is an admin's "continue without it" on a checkpoint whose
// earlier decision was lost with the store's writes (the run's stored state
// went back in time): unlike Waive it accepts an instance that is still
// open, since the people who decided it once may not be there to decide
// again. It records the admin and reason as Waive does.
func (in *Instance) WaiveLost(now time.Time, admin, reason string) error {
	switch in.State {
	case StatePending, StateOffered, StateActive, StateFailed, StateTimedOut:
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
