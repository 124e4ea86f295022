package redisstore

import (
	"cmp"
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ChannelDefaults keeps, per Slack channel, the settings last used to start
// a research there (bot.ChannelDefaults), which the start form offers next.
//
// Key schema (prefix "rb:" by default):
//
//	{p}chandefaults:{channel}   hash: field → value (mode, depth, budget_usd, only_domains, never_domains)
//
// A Put replaces the whole hash in one transaction, so a reader never sees
// half of one channel's settings and half of another's.
type ChannelDefaults struct {
	rdb    *redis.Client
	prefix string
}

// NewChannelDefaults returns a ChannelDefaults using rdb; prefix namespaces
// its keys ("" = "rb:").
func NewChannelDefaults(rdb *redis.Client, prefix string) *ChannelDefaults {
	prefix = cmp.Or(prefix, DefaultPrefix)
	return &ChannelDefaults{rdb: rdb, prefix: prefix}
}

func (d *ChannelDefaults) key(channel string) string { return d.prefix + "chandefaults:" + channel }

// Get returns channel's settings (empty when none were saved).
func (d *ChannelDefaults) Get(ctx context.Context, channel string) (map[string]string, error) {
	m, err := d.rdb.HGetAll(ctx, d.key(channel)).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: channel defaults of %s: %w", channel, err)
	}
	return m, nil
}

// Put replaces channel's settings with fields.
func (d *ChannelDefaults) Put(ctx context.Context, channel string, fields map[string]string) error {
	_, err := d.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, d.key(channel))
		if len(fields) > 0 {
			p.HSet(ctx, d.key(channel), fields)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstore: saving channel defaults of %s: %w", channel, err)
	}
	return nil
}
