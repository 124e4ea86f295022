package fetch

import (
	"context"
	"time"
)

// Cache stores fetched pages (and robots.txt files) for a TTL
// (redisstore.PageCache, shared by every replica). Get reports
// found=false for a missing key. Implementations must be safe for
// concurrent use.
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Set(ctx context.Context, key string, v []byte, ttl time.Duration) error
}
