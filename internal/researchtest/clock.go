package researchtest

import (
	"context"
	"sync"
	"time"

	"github.com/coder/quartz"
)

// Clock is a settable clock for tests: a quartz.Clock whose reading (Now,
// Since, Until) the test sets, and whose timers and tickers run in real
// time, as a process's waits do. Its zero value follows real time; Set
// pins it to a time, and Advance moves it (pinned or not) forward. Tests
// that wait on timers use a quartz mock instead.
type Clock struct {
	mu     sync.Mutex
	pinned time.Time
	offset time.Duration
}

var _ quartz.Clock = (*Clock)(nil)

// NewClock returns a clock pinned at t.
func NewClock(t time.Time) *Clock { return &Clock{pinned: t} }

// Now returns the clock's time.
func (c *Clock) Now(...string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pinned.IsZero() {
		return c.pinned.Add(c.offset)
	}
	return quartz.NewReal().Now().Add(c.offset)
}

// Since returns the time elapsed since t on the clock.
func (c *Clock) Since(t time.Time, _ ...string) time.Duration { return c.Now().Sub(t) }

// Until returns the time from the clock's now until t.
func (c *Clock) Until(t time.Time, _ ...string) time.Duration { return t.Sub(c.Now()) }

// NewTimer returns a real-time timer.
func (c *Clock) NewTimer(d time.Duration, tags ...string) *quartz.Timer {
	return quartz.NewReal().NewTimer(d, tags...)
}

// AfterFunc calls f after d of real time.
func (c *Clock) AfterFunc(d time.Duration, f func(), tags ...string) *quartz.Timer {
	return quartz.NewReal().AfterFunc(d, f, tags...)
}

// NewTicker returns a real-time ticker.
func (c *Clock) NewTicker(d time.Duration, tags ...string) *quartz.Ticker {
	return quartz.NewReal().NewTicker(d, tags...)
}

// TickerFunc calls f every d of real time until ctx ends or f fails.
func (c *Clock) TickerFunc(ctx context.Context, d time.Duration, f func() error, tags ...string) quartz.Waiter {
	return quartz.NewReal().TickerFunc(ctx, d, f, tags...)
}

// Set pins the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pinned, c.offset = t, 0
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
