package checkpoints

import (
	"testing"
	"time"
)

// TestTimeLeftAtTheEdges: past and at the deadline the countdown is over;
// under a minute, minutes, hours and days read as a person says them, and
// never more than the time really left.
func TestTimeLeftAtTheEdges(t *testing.T) {
	now := time.Date(2026, 11, 28, 11, 40, 0, 0, time.UTC)
	for _, c := range []struct {
		left time.Duration
		want string
		ok   bool
	}{
		{-time.Hour, "", false},
		{0, "", false},
		{time.Second, "less than a minute", true},
		{59 * time.Second, "less than a minute", true},
		{time.Minute, "1 min", true},
		{59*time.Minute + 59*time.Second, "59 min", true},
		{time.Hour, "1 h", true},
		{3*time.Hour + 20*time.Minute + 30*time.Second, "3 h 20 min", true},
		{23*time.Hour + 59*time.Minute, "23 h 59 min", true},
		{24 * time.Hour, "1 day", true},
		{26*time.Hour + 10*time.Minute, "1 day 2 h", true},
		{72 * time.Hour, "3 days", true},
		{50*24*time.Hour + 5*time.Hour, "50 days 5 h", true},
	} {
		got, ok := TimeLeft(now.Add(c.left), now)
		if got != c.want || ok != c.ok {
			t.Errorf("TimeLeft(now+%v) = %q, %v; want %q, %v", c.left, got, ok, c.want, c.ok)
		}
	}
	if got, ok := TimeLeft(time.Time{}, now); ok || got != "" {
		t.Errorf("no deadline: %q, %v", got, ok)
	}
}
