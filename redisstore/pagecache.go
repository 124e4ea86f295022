package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// PageCache keeps fetched pages and robots.txt files for a TTL, under
// rb:fetch:<key> (fetch.Cache).
type PageCache struct{ rdb redis.UniversalClient }

// NewPageCache returns the page cache on rdb.
func NewPageCache(rdb redis.UniversalClient) *PageCache { return &PageCache{rdb: rdb} }

// Get returns the values stored under keys, in order, nil for a key with
// none: one GET for one key, one MGET for several.
func (c *PageCache) Get(ctx context.Context, keys ...string) ([][]byte, error) {
	out := make([][]byte, len(keys))
	if len(keys) == 1 {
		b, err := c.rdb.Get(ctx, keyFetch+keys[0]).Bytes()
		if errors.Is(err, redis.Nil) {
			return out, nil
		}
		out[0] = b
		return out, err
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = keyFetch + k
	}
	vals, err := c.rdb.MGet(ctx, full...).Result()
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if s, ok := v.(string); ok && i < len(out) {
			out[i] = []byte(s)
		}
	}
	return out, nil
}

// Set stores v under key for ttl.
func (c *PageCache) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	return c.rdb.Set(ctx, keyFetch+key, v, ttl).Err()
}
