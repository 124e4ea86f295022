package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// PruneReport says what Prune did.
type PruneReport struct {
	// Forgotten counts index entries of runs that had expired.
	Forgotten int
	// Expiring counts finished runs from before retention existed that
	// were given their expiry now.
	Expiring int
	// Deleted counts finished runs past their retention that were deleted.
	Deleted int
	// Kept counts the runs still stored.
	Kept int
}

// Prune is the operator's clean-up (researchbot runs prune): it removes
// runs that expired from every index, gives finished runs stored without an
// expiry (saved before retention existed) the expiry retention gives them,
// deleting those already past it, and moves runs of the old single work
// index into their queue's. Waiting and running runs are never touched.
func (s *Store) Prune(ctx context.Context, now time.Time) (PruneReport, error) {
	var rep PruneReport
	if err := s.migrateWorkIndex(ctx); err != nil {
		return rep, err
	}
	gone := map[string]bool{}
	var cursor uint64
	for {
		members, next, err := s.rdb.ZScan(ctx, s.prefix+"runs", cursor, "", 500).Result()
		if err != nil {
			return rep, err
		}
		for i := 0; i+1 < len(members); i += 2 {
			id := members[i]
			state, err := s.pruneRun(ctx, id, now)
			if err != nil {
				return rep, err
			}
			switch state {
			case pruneGone:
				gone[id] = true
			case pruneDeleted:
				gone[id] = true
				rep.Deleted++
			case pruneExpiring:
				rep.Expiring++
				rep.Kept++
			default:
				rep.Kept++
			}
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	ids := make([]any, 0, len(gone))
	for id := range gone {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return rep, nil
	}
	indexes := []string{s.prefix + "runs", s.prefix + "runs:active"}
	for _, pattern := range []string{"runs:by:*", "work:*", "timers:*"} {
		keys, err := s.scanKeys(ctx, s.prefix+pattern)
		if err != nil {
			return rep, err
		}
		indexes = append(indexes, keys...)
	}
	for _, key := range indexes {
		n, err := s.rdb.ZRem(ctx, key, ids...).Result()
		if err != nil {
			return rep, err
		}
		if key == s.prefix+"runs" {
			rep.Forgotten += int(n)
		}
	}
	return rep, nil
}

type pruneState int

const (
	pruneKept pruneState = iota
	pruneGone
	pruneDeleted
	pruneExpiring
)

// pruneRun looks at one indexed run: gone (expired), kept, or — finished and
// stored without an expiry — deleted or given its expiry.
func (s *Store) pruneRun(ctx context.Context, id string, now time.Time) (pruneState, error) {
	ttl, err := s.rdb.PTTL(ctx, s.runKey(id)).Result()
	if err != nil {
		return pruneKept, err
	}
	switch {
	case ttl == -2*time.Nanosecond || ttl == -2*time.Millisecond: // no such key
		return pruneGone, nil
	case ttl >= 0:
		return pruneKept, nil
	}
	r, err := s.loadMeta(ctx, id)
	if errors.Is(err, pipeline.ErrNotFound) {
		return pruneGone, nil
	}
	if err != nil || !r.Status.Final() || !r.Presented || r.FinishedAt.IsZero() {
		return pruneKept, nil
	}
	left := r.FinishedAt.Add(s.opts.Retention).Sub(now)
	if left <= 0 {
		return pruneDeleted, s.rdb.Del(ctx, s.runKey(id), s.pagesKey(id)).Err()
	}
	pages := max(r.FinishedAt.Add(s.opts.PageRetention).Sub(now), time.Millisecond)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.PExpire(ctx, s.runKey(id), left)
		p.PExpire(ctx, s.pagesKey(id), min(pages, left))
		return nil
	})
	return pruneExpiring, err
}

// migrateWorkIndex moves the entries of the single work index of earlier
// versions ({p}runs:work) into the per-queue indexes.
func (s *Store) migrateWorkIndex(ctx context.Context) error {
	old := s.prefix + "runs:work"
	zs, err := s.rdb.ZRangeWithScores(ctx, old, 0, -1).Result()
	if err != nil || len(zs) == 0 {
		return err
	}
	for _, z := range zs {
		id, _ := z.Member.(string)
		raw, err := s.rdb.HGet(ctx, s.runKey(id), "data").Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return err
		}
		var r struct {
			Origin pipeline.Origin `json:"origin"`
		}
		if json.Unmarshal([]byte(raw), &r) != nil || r.Origin.Queue == "" {
			continue
		}
		if err := s.rdb.ZAdd(ctx, s.workKey(r.Origin.Queue), z).Err(); err != nil {
			return err
		}
		s.rdb.SAdd(ctx, s.prefix+"queues", r.Origin.Queue)
	}
	return s.rdb.Del(ctx, old).Err()
}

// scanKeys lists the keys matching pattern.
func (s *Store) scanKeys(ctx context.Context, pattern string) ([]string, error) {
	var out []string
	iter := s.rdb.Scan(ctx, 0, pattern, 500).Iterator()
	for iter.Next(ctx) {
		if k := iter.Val(); !strings.HasSuffix(k, ":pages") {
			out = append(out, k)
		}
	}
	return out, iter.Err()
}
