package bot

import (
	"context"
	"testing"
	"time"

	"github.com/coder/quartz"
)

// manualClock is a quartz mock whose time moves only when a test says so.
// Its timers (the presenter's progress flushes) fire during Advance, at
// their own times, and Advance returns once their callbacks have: when it
// returns, every flush that was due has been made.
type manualClock struct {
	*quartz.Mock
	t *testing.T
}

func newManualClock(t *testing.T, at time.Time) *manualClock {
	c := &manualClock{Mock: quartz.NewMock(t), t: t}
	c.Set(at)
	return c
}

// Pending reports whether a timer waits to fire.
func (c *manualClock) Pending() bool {
	_, ok := c.Peek()
	return ok
}

// Advance moves the clock forward by d, firing the timers due on the way
// (those their callbacks set too) at their own times.
func (c *manualClock) Advance(d time.Duration) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	advanceTo(ctx, c.Mock, c.Now().Add(d))
	// Timers due at the end fire too.
	for next, ok := c.Peek(); ok && next == 0; next, ok = c.Peek() {
		c.Mock.Advance(0).MustWait(ctx)
	}
}

// realProgress is clock with the presenter's progress paced, and its time
// read, on the real clock, as when PresenterConfig had Now and AfterFunc
// beside Clock: the other timers (Retry-After waits) stay on clock.
type realProgress struct{ quartz.Clock }

// Now reads the real clock.
func (realProgress) Now(tags ...string) time.Time { return quartz.NewReal().Now(tags...) }

// AfterFunc runs f after d of real time.
func (realProgress) AfterFunc(d time.Duration, f func(), tags ...string) *quartz.Timer {
	return quartz.NewReal().AfterFunc(d, f, tags...)
}
