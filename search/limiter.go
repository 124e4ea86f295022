package search

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// RedisLimiter is a Limiter whose per-backend budgets live in Redis
// (generic cell rate algorithm, go-redis/redis_rate), so every replica
// sharing the Redis shares them. Keys are "rate:search:<backend>".
type RedisLimiter struct {
	limiter   *redis_rate.Limiter
	perMinute map[string]int
}

// NewRedisLimiter returns a limiter allowing perMinute[backend] calls per
// minute to each backend (bursts up to the same number). Backends missing from
// the map, or with a value of 0 or less, are not limited.
func NewRedisLimiter(rdb *redis.Client, perMinute map[string]int) *RedisLimiter {
	m := make(map[string]int, len(perMinute))
	for k, v := range perMinute {
		m[k] = v
	}
	return &RedisLimiter{limiter: redis_rate.NewLimiter(rdb), perMinute: m}
}

// Allow implements Limiter.
func (l *RedisLimiter) Allow(ctx context.Context, backend string) (time.Duration, error) {
	n := l.perMinute[backend]
	if n <= 0 {
		return 0, nil
	}
	res, err := l.limiter.Allow(ctx, "search:"+backend, redis_rate.PerMinute(n))
	if err != nil {
		return 0, fmt.Errorf("redis rate limit for %s: %w", backend, err)
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	if res.RetryAfter <= 0 {
		return time.Millisecond, nil
	}
	return res.RetryAfter, nil
}
