package redisstore

// Reading the run indexes: List (all runs or a person's), the queues'
// work index, the claim on a run (the claim passes set it in claimScript),
// and CountActive for the runs-by-state gauge.

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// List returns runs, newest first, without their page texts.
func (s *Store) List(ctx context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	key := s.prefix + "runs"
	if f.RequestedBy != "" {
		key = s.userKey(f.RequestedBy)
	}
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: 0, Stop: limit - 1, Rev: true}).Result()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ids))
	floors := make([]int64, len(ids))
	for i, id := range ids {
		keys[i] = s.runKey(id)
		floors[i] = s.watermark(id)
	}
	vals, err := loadVersioned(ctx, s.rdb, keys)
	if err != nil {
		return nil, err
	}
	runs := make([]*pipeline.Run, 0, len(ids))
	for i, id := range ids {
		r, err := s.decodeRun(id, vals[i], floors[i])
		if errors.Is(err, pipeline.ErrNotFound) {
			continue // expired; Prune removes it from the index
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// WorkRuns returns runs of the queue a worker has something to do for (not
// those waiting for a person) that were last saved before the given time,
// oldest first.
func (s *Store) WorkRuns(ctx context.Context, queue string, before time.Time, limit int) ([]string, error) {
	return s.rdb.ZRangeArgs(ctx, zrangeBefore(s.workKey(queue), before, limit)).Result()
}

// zrangeBefore is the range of a zset's members scored in ms before t,
// lowest first, at most limit.
func zrangeBefore(key string, t time.Time, limit int) redis.ZRangeArgs {
	return redis.ZRangeArgs{
		Key: key, ByScore: true, Start: "-inf", Stop: "(" + strconv.FormatInt(t.UnixMilli(), 10), Count: int64(limit),
	}
}

// CountActive counts unfinished runs by status (at most the 10 000 most
// recently saved), for the runs-by-state gauge.
func (s *Store) CountActive(ctx context.Context) (map[string]int, error) {
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.prefix + "runs:active", Start: 0, Stop: 9999, Rev: true}).Result()
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.StringCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, s.runKey(id), "status")
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	counts := map[string]int{}
	for _, c := range cmds {
		if st, err := c.Result(); err == nil {
			counts[st]++
		}
	}
	return counts, nil
}
