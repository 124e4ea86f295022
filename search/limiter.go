package search

import (
	"context"
	"time"
)

// RateBudget is a rate budget shared by every replica
// (redisstore.RateLimiter): AllowN takes events events from key's budget
// of n per period, all or none, and returns 0 when all were taken, or how
// long to wait (none taken).
type RateBudget interface {
	AllowN(ctx context.Context, key string, events, n int, per time.Duration) (wait time.Duration, err error)
}

// SharedLimiter is a Limiter whose per-backend budgets (keyed by the
// backend's name) are shared by every replica.
type SharedLimiter struct {
	budget    RateBudget
	perMinute map[string]int
}

// NewSharedLimiter returns a limiter allowing perMinute[backend] calls per
// minute to each backend (bursts up to the same number) in budget. Backends
// missing from the map, or with a value of 0 or less, are not limited.
func NewSharedLimiter(budget RateBudget, perMinute map[string]int) *SharedLimiter {
	m := make(map[string]int, len(perMinute))
	for k, v := range perMinute {
		m[k] = v
	}
	return &SharedLimiter{budget: budget, perMinute: m}
}

// Allow implements Limiter.
func (l *SharedLimiter) Allow(ctx context.Context, backend string) (time.Duration, error) {
	return l.AllowN(ctx, backend, 1)
}

// AllowN implements Limiter.
func (l *SharedLimiter) AllowN(ctx context.Context, backend string, n int) (time.Duration, error) {
	return l.budget.AllowN(ctx, backend, n, l.perMinute[backend], time.Minute)
}
