package bot

import (
	"slices"
	"sync"
	"time"
)

// manualClock is a clock whose time moves only when a test says so. Its
// timers (AfterFunc, for PresenterConfig) fire during Advance, in the
// order they are due and in the test's goroutine: when Advance returns,
// every flush that was due has been made.
type manualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*manualTimer
}

type manualTimer struct {
	at  time.Time
	seq int
	f   func()
}

func newManualClock(t time.Time) *manualClock { return &manualClock{now: t} }

// Now returns the clock's time.
func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc calls f when the clock has been advanced by d; stop cancels it
// and reports whether it was still pending.
func (c *manualClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := len(c.timers)
		c.timers = slices.DeleteFunc(c.timers, func(x *manualTimer) bool { return x == t })
		return len(c.timers) < n
	}
}

// Pending is how many timers wait to fire.
func (c *manualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Advance moves the clock forward by d, firing the timers due on the way
// (those their callbacks set too) at their own times.
func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		i := -1
		for j, t := range c.timers {
			if !t.at.After(end) && (i < 0 || t.at.Before(c.timers[i].at) || (t.at.Equal(c.timers[i].at) && t.seq < c.timers[i].seq)) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		t := c.timers[i]
		c.timers = slices.Delete(c.timers, i, i+1)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}
