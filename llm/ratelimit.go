package llm

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// RedisLimiter paces requests to one provider across all replicas with a
// GCRA limit kept in Redis (redis_rate): at most perMinute requests per
// minute, with bursts of up to perMinute. It implements Limiter.
type RedisLimiter struct {
	limiter *redis_rate.Limiter
	key     string
	limit   redis_rate.Limit
	sleep   func(ctx context.Context, d time.Duration) error
}

// NewRedisLimiter returns a limiter allowing perMinute requests per minute
// for key (one key per provider, e.g. "openai" or a base URL's host), shared by
// every process using the same Redis. perMinute <= 0 disables pacing.
func NewRedisLimiter(rdb *redis.Client, key string, perMinute int) *RedisLimiter {
	return &RedisLimiter{
		limiter: redis_rate.NewLimiter(rdb),
		key:     "llm:" + key,
		limit:   redis_rate.PerMinute(perMinute),
		sleep:   sleepCtx,
	}
}

// Wait blocks until a request may be made or ctx ends. A Redis failure is
// returned as an error (the caller decides whether to proceed unpaced).
func (l *RedisLimiter) Wait(ctx context.Context) error {
	if l.limit.Rate <= 0 {
		return nil
	}
	for {
		res, err := l.limiter.Allow(ctx, l.key, l.limit)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("llm: rate limiter: %w", err)
		}
		if res.Allowed > 0 {
			return nil
		}
		d := res.RetryAfter
		if d <= 0 {
			d = 10 * time.Millisecond
		}
		if err := l.sleep(ctx, d); err != nil {
			return err
		}
	}
}
