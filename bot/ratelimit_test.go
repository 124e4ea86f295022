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

// TestLimitOrTakesTheDefaultOnlyWhenUnset: a limit with a zero rate or a
// zero period is unset and takes the default; any other is kept.
func TestLimitOrTakesTheDefaultOnlyWhenUnset(t *testing.T) {
	def := PerHour(20)
	for _, tc := range []struct{ l, want Limit }{
		{Limit{}, def},
		{Limit{Rate: 3}, def},
		{Limit{Period: time.Minute}, def},
		{Limit{Rate: 3, Period: time.Minute}, Limit{Rate: 3, Period: time.Minute}},
	} {
		if got := tc.l.Or(def); got != tc.want {
			t.Errorf("%v.Or(%v) = %v, want %v", tc.l, def, got, tc.want)
		}
	}
}
