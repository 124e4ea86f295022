// Package clockwait is the one wait on the injected clock that ends with
// its context: what quartz.Clock lacks and the packages that sleep
// (retries, back-offs, pacing) would otherwise each write again.
package clockwait

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// Sleep waits for d on clock, or until ctx ends, and returns ctx's error
// in that case. tags name the timer for quartz's traps in tests.
func Sleep(ctx context.Context, clock quartz.Clock, d time.Duration, tags ...string) error {
	t := clock.NewTimer(d, tags...)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
