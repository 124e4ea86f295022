package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// SlackMemory is what the Slack adapter remembers for every replica: where
// a checkpoint's or a run's progress message is, how far a final post got,
// which deliveries were taken (bot.Memory). Every key is rb:slack:<key>,
// the key named by bot (see the package's key table).
type SlackMemory struct{ rdb redis.UniversalClient }

// NewSlackMemory returns the Slack adapter's memory on rdb.
func NewSlackMemory(rdb redis.UniversalClient) *SlackMemory { return &SlackMemory{rdb: rdb} }

// Recall returns the value remembered under key, found=false when there is none.
func (m *SlackMemory) Recall(ctx context.Context, key string) (string, bool, error) {
	v, err := m.rdb.Get(ctx, keySlack+key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// Remember stores value under key for ttl.
func (m *SlackMemory) Remember(ctx context.Context, key, value string, ttl time.Duration) error {
	return m.rdb.Set(ctx, keySlack+key, value, ttl).Err()
}

// RecallFields returns the fields remembered under key (empty when none).
func (m *SlackMemory) RecallFields(ctx context.Context, key string) (map[string]string, error) {
	return m.rdb.HGetAll(ctx, keySlack+key).Result()
}

// RememberField sets one field under key and renews the key's ttl, at once.
func (m *SlackMemory) RememberField(ctx context.Context, key, field, value string, ttl time.Duration) error {
	pipe := m.rdb.TxPipeline()
	pipe.HSet(ctx, keySlack+key, field, value)
	pipe.Expire(ctx, keySlack+key, ttl)
	_, err := pipe.Exec(ctx)
	return err
}

// FirstTime records key for ttl and reports whether it was not recorded
// already (a delivery taken by any replica).
func (m *SlackMemory) FirstTime(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return m.rdb.SetNX(ctx, keySlack+key, 1, ttl).Result()
}

// Ping reports whether Redis answers (for readiness checks).
func (m *SlackMemory) Ping(ctx context.Context) error { return m.rdb.Ping(ctx).Err() }
