// Package redisstore is researchbot's one persistence implementation, on
// Redis: runs saved with a version check (compare-and-set), checkpoint
// definitions and their failure windows, cancellation requests, the work
// queue (asynq), and the per-run lease (a Redis lock). The same code serves a
// real Redis and the embedded in-process one.
//
// Key schema (all keys start with the prefix, "rb:" by default):
//
//	{p}run:{id}          hash: v (version), data (run JSON), status
//	{p}runs              zset: run ids by creation time (ms)
//	{p}runs:active       zset: unfinished run ids by last save (ms), for the gauge
//	{p}runs:work         zset: runs a worker has something to do for, by last save (ms), for rescue
//	{p}rescued:{id}      string: a recent rescue of the run (at most one per window)
//	{p}runs:by:{user}    zset: a requester's run ids by creation time
//	{p}defs              hash: checkpoint definition id → JSON
//	{p}cpfail:{def}      zset: failure times (ms) of a checkpoint definition
//	{p}cancel:{id}       string: who asked to cancel the run
//	{p}lock:run:{id}     the run's lease (bsm/redislock)
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Store implements pipeline.Store on Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
}

// NewStore returns a Store using rdb; prefix namespaces its keys ("" = "rb:").
func NewStore(rdb *redis.Client, prefix string) *Store {
	if prefix == "" {
		prefix = "rb:"
	}
	return &Store{rdb: rdb, prefix: prefix}
}

func (s *Store) runKey(id string) string { return s.prefix + "run:" + id }

// saveScript writes the run only if its stored version equals ARGV[1], and
// keeps the index of unfinished runs (KEYS[2]) up to date.
var saveScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[1]) + 1, 'data', ARGV[2], 'status', ARGV[3])
if ARGV[5] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[6])
else
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[6])
end
if ARGV[7] == '1' then
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6])
else
  redis.call('ZREM', KEYS[3], ARGV[6])
end
return 1
`)

// Create stores a new run at Version 1.
func (s *Store) Create(ctx context.Context, r *pipeline.Run) error {
	r.Version = 1
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode run: %w", err)
	}
	ok, err := s.rdb.HSetNX(ctx, s.runKey(r.ID), "data", data).Result()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("run %s already exists", r.ID)
	}
	score := float64(r.CreatedAt.UnixMilli())
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, s.runKey(r.ID), "v", 1, "status", string(r.Status))
		p.ZAdd(ctx, s.prefix+"runs", redis.Z{Score: score, Member: r.ID})
		p.ZAdd(ctx, s.prefix+"runs:active", redis.Z{Score: float64(r.UpdatedAt.UnixMilli()), Member: r.ID})
		p.ZAdd(ctx, s.prefix+"runs:work", redis.Z{Score: float64(r.UpdatedAt.UnixMilli()), Member: r.ID})
		if r.RequestedBy != "" {
			p.ZAdd(ctx, s.prefix+"runs:by:"+r.RequestedBy, redis.Z{Score: score, Member: r.ID})
		}
		return nil
	})
	return err
}

// Load returns the run, or pipeline.ErrNotFound.
func (s *Store) Load(ctx context.Context, id string) (*pipeline.Run, error) {
	vals, err := s.rdb.HMGet(ctx, s.runKey(id), "v", "data").Result()
	if err != nil {
		return nil, err
	}
	return decodeRun(id, vals)
}

func decodeRun(id string, vals []any) (*pipeline.Run, error) {
	var r pipeline.Run
	v, err := decodeVersioned("run", id, vals, pipeline.ErrNotFound, &r)
	if err != nil {
		return nil, err
	}
	r.Version = v
	return &r, nil
}

// Save writes r if the stored version still equals r.Version, then
// increments r.Version; otherwise it returns pipeline.ErrConflict.
func (s *Store) Save(ctx context.Context, r *pipeline.Run) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode run: %w", err)
	}
	// A finished run stays in the active index until its outcome was shown.
	final := "0"
	if r.Status.Final() && r.Presented {
		final = "1"
	}
	work := "0"
	if needsWorker(r) {
		work = "1"
	}
	res, err := saveScript.Run(ctx, s.rdb, []string{s.runKey(r.ID), s.prefix + "runs:active", s.prefix + "runs:work"},
		r.Version, data, string(r.Status), r.UpdatedAt.UnixMilli(), final, r.ID, work).Int()
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.ID, err)
	}
	switch res {
	case 1:
		r.Version++
		return nil
	case 0:
		return fmt.Errorf("save run %s at version %d: %w", r.ID, r.Version, pipeline.ErrConflict)
	default:
		return fmt.Errorf("save run %s: %w", r.ID, pipeline.ErrNotFound)
	}
}

// List returns runs, newest first.
func (s *Store) List(ctx context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	key := s.prefix + "runs"
	if f.RequestedBy != "" {
		key = s.prefix + "runs:by:" + f.RequestedBy
	}
	ids, err := s.rdb.ZRevRange(ctx, key, 0, int64(limit-1)).Result()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.runKey(id)
	}
	vals, err := loadVersioned(ctx, s.rdb, keys)
	if err != nil {
		return nil, err
	}
	runs := make([]*pipeline.Run, 0, len(ids))
	for i, id := range ids {
		r, err := decodeRun(id, vals[i])
		if errors.Is(err, pipeline.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// Definitions returns every stored checkpoint definition.
func (s *Store) Definitions(ctx context.Context) ([]checkpoints.Definition, error) {
	m, err := s.rdb.HGetAll(ctx, s.prefix+"defs").Result()
	if err != nil {
		return nil, err
	}
	defs := make([]checkpoints.Definition, 0, len(m))
	for id, raw := range m {
		var d checkpoints.Definition
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			return nil, fmt.Errorf("decode checkpoint definition %s: %w", id, err)
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// PutDefinition stores a checkpoint definition after validating it.
func (s *Store) PutDefinition(ctx context.Context, d checkpoints.Definition) error {
	if err := checkpoints.ValidateDefinition(d); err != nil {
		return err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return s.rdb.HSet(ctx, s.prefix+"defs", d.ID, raw).Err()
}

// RecordCheckpointFailure notes a failure of a definition and returns the
// failure times within window before at.
func (s *Store) RecordCheckpointFailure(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error) {
	key := s.prefix + "cpfail:" + defID
	member := strconv.FormatInt(at.UnixNano(), 10)
	if err := s.rdb.ZAdd(ctx, key, redis.Z{Score: float64(at.UnixMilli()), Member: member}).Err(); err != nil {
		return nil, err
	}
	return s.CheckpointFailures(ctx, defID, at, window)
}

// CheckpointFailures returns the failure times within window before at, and
// forgets older ones.
func (s *Store) CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error) {
	key := s.prefix + "cpfail:" + defID
	from := at.Add(-window).UnixMilli()
	if window > 0 {
		if err := s.rdb.ZRemRangeByScore(ctx, key, "-inf", "("+strconv.FormatInt(from, 10)).Err(); err != nil {
			return nil, err
		}
	}
	zs, err := s.rdb.ZRangeByScoreWithScores(ctx, key, &redis.ZRangeBy{Min: strconv.FormatInt(from, 10), Max: strconv.FormatInt(at.UnixMilli(), 10)}).Result()
	if err != nil {
		return nil, err
	}
	out := make([]time.Time, len(zs))
	for i, z := range zs {
		out[i] = time.UnixMilli(int64(z.Score))
	}
	return out, nil
}

// RequestCancel marks a run to stop at its next step boundary.
func (s *Store) RequestCancel(ctx context.Context, runID, by string) error {
	if by == "" {
		by = "someone"
	}
	return s.rdb.Set(ctx, s.prefix+"cancel:"+runID, by, 30*24*time.Hour).Err()
}

// CancelRequested reports who asked to cancel the run, or "".
func (s *Store) CancelRequested(ctx context.Context, runID string) (string, error) {
	by, err := s.rdb.Get(ctx, s.prefix+"cancel:"+runID).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return by, err
}

// StaleRuns returns runs a worker has something to do for (not those
// waiting for a person) that were last saved before the given time.
func (s *Store) StaleRuns(ctx context.Context, before time.Time, limit int) ([]string, error) {
	return s.rdb.ZRangeByScore(ctx, s.prefix+"runs:work", &redis.ZRangeBy{
		Min: "-inf", Max: "(" + strconv.FormatInt(before.UnixMilli(), 10), Count: int64(limit),
	}).Result()
}

// ClaimRescue reports whether this caller may rescue the run now: at most
// one rescue per window, whichever replica asks first.
func (s *Store) ClaimRescue(ctx context.Context, runID string, window time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, s.prefix+"rescued:"+runID, "1", window).Result()
}

// CountActive counts unfinished runs by status (at most the 10 000 most
// recently saved), for the runs-by-state gauge.
func (s *Store) CountActive(ctx context.Context) (map[string]int, error) {
	ids, err := s.rdb.ZRevRange(ctx, s.prefix+"runs:active", 0, 9999).Result()
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

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }
