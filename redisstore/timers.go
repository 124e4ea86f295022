package redisstore

import (
	"sync"
	"time"

	"github.com/coder/quartz"
)

// deadlineTimer is a worker's one timer, armed at the earliest checkpoint
// deadline it knows of in its queues (the deadline indexes, read after
// each pass, and Queue.WakeAt's hints). When it fires, the worker runs a
// pass, which claims the runs whose deadline has come: a timer goes off on
// this process's clock at its deadline, rounded up to the millisecond the
// index keeps, never before.
type deadlineTimer struct {
	clock quartz.Clock
	fire  func()

	mu      sync.Mutex
	at      int64 // the deadline armed (Unix ms), 0 for none
	t       *quartz.Timer
	stopped bool
}

func newDeadlineTimer(clock quartz.Clock, fire func()) *deadlineTimer {
	return &deadlineTimer{clock: clock, fire: fire}
}

// armAt makes the timer fire at ms (Unix milliseconds) unless it is armed
// for an earlier time already.
func (d *deadlineTimer) armAt(ms int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.at != 0 && d.at <= ms {
		return
	}
	if d.t != nil {
		d.t.Stop()
	}
	d.at = ms
	wait := max(time.UnixMilli(ms).Sub(d.clock.Now()), 0)
	d.t = d.clock.AfterFunc(wait, func() {
		d.mu.Lock()
		if d.at == ms {
			d.at = 0
		}
		d.mu.Unlock()
		d.fire()
	}, "redisstore", "deadline")
}

// stop disarms the timer for good.
func (d *deadlineTimer) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.t != nil {
		d.t.Stop()
	}
}
