package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// PageCache keeps fetched pages and robots.txt files for a TTL, under
// rb:fetch:<key> (fetch.Cache).
//
// Calls that arrive while another is on its way to Redis go together after
// it, in one round trip on one connection (group commit, as RateLimiter's
// calls for one budget): the reads of a batch are one MGET (one GET for a
// single key), its writes a SET each. Nobody waits for a batch to fill: the
// first call goes at once, and those that come meanwhile wait only for it
// to end. A read step fetches its pages at once, and each fetch read the
// cache on its own: as many MGETs as pages, and as many connections opened
// (each a HELLO), where now two reads on two connections do.
type PageCache struct {
	rdb     redis.UniversalClient
	batches groupCommit[pageBatch]
}

// pageBatch is cache calls that go to Redis together.
type pageBatch struct {
	gets [][]string // each read's keys, in full
	sets []pageSet
	// The replies: each read's values (or the reads' error), each write's
	// error.
	vals    [][][]byte
	getErr  error
	setErrs []error
}

// pageSet is one write of a batch.
type pageSet struct {
	key string
	v   []byte
	ttl time.Duration
}

// NewPageCache returns the page cache on rdb.
func NewPageCache(rdb redis.UniversalClient) *PageCache { return &PageCache{rdb: rdb} }

// Get returns the values stored under keys, in order, nil for a key with
// none.
func (c *PageCache) Get(ctx context.Context, keys ...string) ([][]byte, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = keyFetch + k
	}
	b, i, err := c.do(ctx, func(b *pageBatch) int {
		b.gets = append(b.gets, full)
		return len(b.gets) - 1
	})
	if err != nil {
		return nil, err
	}
	if b.getErr != nil {
		return nil, b.getErr
	}
	return b.vals[i], nil
}

// Set stores v under key for ttl.
func (c *PageCache) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	b, i, err := c.do(ctx, func(b *pageBatch) int {
		b.sets = append(b.sets, pageSet{key: keyFetch + key, v: v, ttl: ttl})
		return len(b.sets) - 1
	})
	if err != nil {
		return err
	}
	return b.setErrs[i]
}

// do adds a call to the batch (add returns its index there) and returns
// the batch once its replies are in (an error only when ctx ended first).
func (c *PageCache) do(ctx context.Context, add func(*pageBatch) int) (*pageBatch, int, error) {
	b, i, _, err := c.batches.do(ctx, "", add, func(ctx context.Context, _ int, pb *pageBatch) { c.send(ctx, pb) })
	if err != nil {
		return nil, 0, err
	}
	return &b.data, i, nil
}

// send makes the batch's calls in one round trip and records the replies.
func (c *PageCache) send(ctx context.Context, b *pageBatch) {
	var keys []string
	for _, g := range b.gets {
		keys = append(keys, g...)
	}
	var get *redis.StringCmd
	var mget *redis.SliceCmd
	sets := make([]*redis.StatusCmd, len(b.sets))
	// Each call's own reply says how it went (a missing key is no error).
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		switch {
		case len(keys) == 1:
			get = p.Get(ctx, keys[0])
		case len(keys) > 1:
			mget = p.MGet(ctx, keys...)
		}
		for i, s := range b.sets {
			sets[i] = p.Set(ctx, s.key, s.v, s.ttl)
		}
		return nil
	})
	b.setErrs = make([]error, len(b.sets))
	for i, s := range sets {
		b.setErrs[i] = s.Err()
	}
	var vals []any
	switch {
	case get != nil:
		v, err := get.Result()
		switch {
		case errors.Is(err, redis.Nil):
			vals = []any{nil}
		case err != nil:
			b.getErr = err
			return
		default:
			vals = []any{v}
		}
	case mget != nil:
		if err := mget.Err(); err != nil {
			b.getErr = err
			return
		}
		vals = mget.Val()
	}
	b.vals = make([][][]byte, len(b.gets))
	at := 0
	for gi, g := range b.gets {
		out := make([][]byte, len(g))
		for k := range g {
			if at < len(vals) {
				if s, ok := vals[at].(string); ok {
					out[k] = []byte(s)
				}
			}
			at++
		}
		b.vals[gi] = out
	}
}
