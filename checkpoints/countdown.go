package checkpoints

import (
	"fmt"
	"time"
)

// TimeLeft says, for a person, how long there is until deadline as of now:
// "less than a minute", "45 min", "3 h 20 min", "3 h", "1 day",
// "2 days 4 h". Minutes are counted down (59 min 50 s is "59 min"), so
// the time said is never more than the time left. It reports false when
// there is no deadline or it has passed: the countdown is over.
func TimeLeft(deadline, now time.Time) (string, bool) {
	if deadline.IsZero() || !deadline.After(now) {
		return "", false
	}
	left := deadline.Sub(now)
	mins := int(left / time.Minute)
	hours, days := mins/60, mins/(24*60)
	switch {
	case mins < 1:
		return "less than a minute", true
	case hours < 1:
		return fmt.Sprintf("%d min", mins), true
	case days < 1:
		if m := mins % 60; m > 0 {
			return fmt.Sprintf("%d h %d min", hours, m), true
		}
		return fmt.Sprintf("%d h", hours), true
	}
	s := "1 day"
	if days > 1 {
		s = fmt.Sprintf("%d days", days)
	}
	if h := hours % 24; h > 0 {
		s += fmt.Sprintf(" %d h", h)
	}
	return s, true
}
