package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/scheduler"
)

// DefaultConversationTTL is how long an untouched stream creation conversation
// is kept: an abandoned one expires after a week.
const DefaultConversationTTL = 7 * 24 * time.Hour

// Conversations keeps the stream creation conversations, one per Slack thread,
// so that any replica can continue a conversation and it survives restarts.
// Its keys are in the package's key table (doc.go).
//
// Every write is a compare-and-set on the version and renews the key's TTL;
// a conversation nobody touches for the TTL expires.
type Conversations struct {
	rdb    *redis.Client
	prefix string
	ttl    time.Duration
}

// NewConversations returns a Conversations using rdb; prefix namespaces its
// keys ("" = "rb:"), ttl is how long an untouched conversation lives (zero
// means DefaultConversationTTL).
func NewConversations(rdb *redis.Client, prefix string, ttl time.Duration) *Conversations {
	prefix = cmp.Or(prefix, DefaultPrefix)
	if ttl <= 0 {
		ttl = DefaultConversationTTL
	}
	return &Conversations{rdb: rdb, prefix: prefix, ttl: ttl}
}

func (s *Conversations) key(channel, threadTS string) string {
	return s.prefix + "streamconv:" + channel + ":" + threadTS
}

// createConvScript: KEYS conv; ARGV owner, data, ttl ms.
var createConvScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'owner', ARGV[1], 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// updateConvScript: KEYS conv; ARGV version, data, ttl ms.
var updateConvScript = newScript(`
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', tonumber(v) + 1, 'data', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return tonumber(v) + 1
`)

// Create stores a new conversation in the thread at version 1, owned by
// c.Spec.Owner. It returns false when the thread already has one.
func (s *Conversations) Create(ctx context.Context, channel, threadTS string, c scheduler.Conversation) (bool, error) {
	if channel == "" || threadTS == "" {
		return false, errors.New("redisstore: a conversation needs a channel and a thread")
	}
	data, err := json.Marshal(c)
	if err != nil {
		return false, fmt.Errorf("encode conversation: %w", err)
	}
	res, err := createConvScript.Run(ctx, s.rdb, []string{s.key(channel, threadTS)}, c.Spec.Owner, data, s.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("create conversation %s/%s: %w", channel, threadTS, err)
	}
	return res == 1, nil
}

// Get returns the conversation of the thread and its version; ok is false
// when the thread has none (never had, finished and expired, or abandoned).
func (s *Conversations) Get(ctx context.Context, channel, threadTS string) (c scheduler.Conversation, version int64, ok bool, err error) {
	vals, err := s.rdb.HMGet(ctx, s.key(channel, threadTS), "v", "owner", "data").Result()
	if err != nil {
		return c, 0, false, fmt.Errorf("load conversation %s/%s: %w", channel, threadTS, err)
	}
	vs, ok1 := vals[0].(string)
	owner, _ := vals[1].(string)
	data, ok2 := vals[2].(string)
	if !ok1 || !ok2 {
		return c, 0, false, nil
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return c, 0, false, fmt.Errorf("decode conversation %s/%s: %w", channel, threadTS, err)
	}
	version, err = strconv.ParseInt(vs, 10, 64)
	if err != nil {
		return c, 0, false, fmt.Errorf("conversation %s/%s has a bad version %q", channel, threadTS, vs)
	}
	c.Spec.Owner = owner // the owner is fixed when the conversation is created
	return c, version, true, nil
}

// Update writes c if the stored version still equals version and returns the
// new version; ok is false (and nothing is written) when the conversation
// changed meanwhile or is gone. The owner cannot change.
func (s *Conversations) Update(ctx context.Context, channel, threadTS string, version int64, c scheduler.Conversation) (newVersion int64, ok bool, err error) {
	data, err := json.Marshal(c)
	if err != nil {
		return 0, false, fmt.Errorf("encode conversation: %w", err)
	}
	res, err := updateConvScript.Run(ctx, s.rdb, []string{s.key(channel, threadTS)}, version, data, s.ttl.Milliseconds()).Int64()
	if err != nil {
		return 0, false, fmt.Errorf("update conversation %s/%s: %w", channel, threadTS, err)
	}
	if res <= 0 {
		return 0, false, nil
	}
	return res, true, nil
}

// Delete removes the conversation of the thread, if any.
func (s *Conversations) Delete(ctx context.Context, channel, threadTS string) error {
	return s.rdb.Del(ctx, s.key(channel, threadTS)).Err()
}
