package researchtest

import (
	"sync"
	"time"
)

// Clock is a settable clock for tests. Its zero value follows real time;
// Set pins it to a time, and Advance moves it (pinned or not) forward.
type Clock struct {
	mu     sync.Mutex
	pinned time.Time
	offset time.Duration
}

// NewClock returns a clock pinned at t.
func NewClock(t time.Time) *Clock { return &Clock{pinned: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pinned.IsZero() {
		return c.pinned.Add(c.offset)
	}
	return time.Now().Add(c.offset)
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
