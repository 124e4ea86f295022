package fetch

import (
	"context"
	"time"
)

// Cache stores fetched pages (and robots.txt files) for a TTL
// (redisstore.PageCache, shared by every replica). Get reads several
// keys at once (one round trip, one command: a page's entry and its
// robots.txt's are read together) and returns their values in order, nil
// for a missing key. Implementations must be safe for concurrent use.
type Cache interface {
	Get(ctx context.Context, keys ...string) ([][]byte, error)
	Set(ctx context.Context, key string, v []byte, ttl time.Duration) error
}
