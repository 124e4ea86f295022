package llm

import (
	"context"
	"fmt"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/internal/clockwait"
)

// RateBudget is a rate budget shared by every replica
// (redisstore.RateLimiter): Allow takes one event from key's budget of n
// per period and returns 0, or how long to wait when it is spent.
type RateBudget interface {
	Allow(ctx context.Context, key string, n int, per time.Duration) (wait time.Duration, err error)
}

// SharedLimiter paces requests to one provider across all replicas: at
// most perMinute requests per minute, with bursts of up to perMinute, in a
// budget every replica shares. It implements Limiter.
type SharedLimiter struct {
	budget    RateBudget
	key       string
	perMinute int
	// clock times the waits for the budget (timers tagged "llm", "limiter").
	clock quartz.Clock
}

// NewSharedLimiter returns a limiter allowing perMinute requests per minute
// for key (one key per provider, e.g. "openai" or a base URL's host) in
// budget, waiting on clock when it is spent. perMinute <= 0 disables pacing.
func NewSharedLimiter(budget RateBudget, key string, perMinute int, clock quartz.Clock) *SharedLimiter {
	return &SharedLimiter{budget: budget, key: key, perMinute: perMinute, clock: clock}
}

// Wait blocks until a request may be made or ctx ends. A failure of the
// budget is returned as an error (the caller decides whether to proceed
// unpaced).
func (l *SharedLimiter) Wait(ctx context.Context) error {
	if l.perMinute <= 0 {
		return nil
	}
	for {
		d, err := l.budget.Allow(ctx, l.key, l.perMinute, time.Minute)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("llm: rate limiter: %w", err)
		}
		if d <= 0 {
			return nil
		}
		if err := clockwait.Sleep(ctx, l.clock, d, "llm", "limiter"); err != nil {
			return err
		}
	}
}
