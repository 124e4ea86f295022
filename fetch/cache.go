package fetch

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cache stores fetched pages (and robots.txt files) for a TTL. Get reports
// found=false for a missing key. Implementations must be safe for
// concurrent use.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, v []byte, ttl time.Duration) error
}

// RedisCache is a Cache backed by Redis; every key is stored under a prefix
// and expires after the TTL given to Set.
type RedisCache struct {
	rdb    *redis.Client
	prefix string
}

// NewRedisCache returns a Cache that stores values in rdb under prefix
// (for example "researchbot:fetch:").
func NewRedisCache(rdb *redis.Client, prefix string) *RedisCache {
	return &RedisCache{rdb: rdb, prefix: prefix}
}

// Get returns the value stored under key, found=false when there is none.
func (c *RedisCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := c.rdb.Get(ctx, c.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Set stores v under key for ttl.
func (c *RedisCache) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	return c.rdb.Set(ctx, c.prefix+key, v, ttl).Err()
}
