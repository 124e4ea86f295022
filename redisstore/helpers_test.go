package redisstore

import "github.com/redis/go-redis/v9"

// The helpers below serve the tests only; the program reaches none of them
// (make lint runs deadcode).

// NewStore returns a Store using rdb with the default retention; prefix
// namespaces its keys ("" = "rb:").
func NewStore(rdb *redis.Client, prefix string) *Store {
	return NewStoreWithOptions(rdb, StoreOptions{Prefix: prefix})
}

// Prefix is the prefix of the stores' keys.
func (d *DB) Prefix() string { return d.prefix }

// waiting is how many calls wait in key's open batch.
func (g *groupCommit[T]) waiting(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.keys[key]; c != nil && c.open != nil {
		return c.open.calls
	}
	return 0
}

// armed is the deadline the timer is armed for (Unix ms, 0 for none).
func (d *deadlineTimer) armed() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at
}
