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

// Get returns the value stored under key, found=false when there is none.
func (c *PageCache) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := c.rdb.Get(ctx, keyFetch+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Set stores v under key for ttl.
func (c *PageCache) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	return c.rdb.Set(ctx, keyFetch+key, v, ttl).Err()
}
