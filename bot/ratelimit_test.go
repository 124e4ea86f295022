package bot

import (
	"context"
	"testing"
	"time"
)

// budgetSaying is a RateBudget that answers every Allow with wait.
type budgetSaying time.Duration

func (b budgetSaying) Allow(context.Context, string, int, time.Duration) (time.Duration, error) {
	return time.Duration(b), nil
}

// TestLimitTakeSaysTheWaitInWholeSeconds: a refusal's wait is what every
// refusing message says, whole seconds and at least one; an allowed event
// waits nothing.
func TestLimitTakeSaysTheWaitInWholeSeconds(t *testing.T) {
	l := Limit{Rate: 3, Period: time.Minute}
	for budget, want := range map[time.Duration]time.Duration{0: 0, 200 * time.Millisecond: time.Second, 1500 * time.Millisecond: 2 * time.Second, 42 * time.Second: 42 * time.Second} {
		if got, err := l.Take(context.Background(), budgetSaying(budget), "k"); err != nil || got != want {
			t.Errorf("Take with a budget saying %s = %s, %v; want %s", budget, got, err, want)
		}
	}
}
