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
)

func (s *Store) defsKey() string                 { return s.prefix + "defs" }
func (s *Store) failuresKey(defID string) string { return s.prefix + "cpfail:" + defID }
func (s *Store) alertKey(defID string) string    { return s.prefix + "cpalert:" + defID }

// Definitions returns every stored checkpoint definition.
func (s *Store) Definitions(ctx context.Context) ([]checkpoints.Definition, error) {
	m, err := s.rdb.HGetAll(ctx, s.defsKey()).Result()
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
	raw, err := encodeDefinition(d)
	if err != nil {
		return err
	}
	return s.rdb.HSet(ctx, s.defsKey(), d.ID, raw).Err()
}

// RecordCheckpointFailure notes a failure of a definition and returns the
// failure times within window before at.
func (s *Store) RecordCheckpointFailure(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error) {
	key := s.failuresKey(defID)
	member := strconv.FormatInt(at.UnixNano(), 10)
	if err := s.rdb.ZAdd(ctx, key, redis.Z{Score: float64(at.UnixMilli()), Member: member}).Err(); err != nil {
		return nil, err
	}
	return s.CheckpointFailures(ctx, defID, at, window)
}

// CheckpointFailures returns the failure times within window before at, and
// forgets older ones.
func (s *Store) CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error) {
	key := s.failuresKey(defID)
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

// Definition returns the stored definition with that id, or checkpoints.ErrNoDefinition.
func (s *Store) Definition(ctx context.Context, id string) (checkpoints.Definition, error) {
	var d checkpoints.Definition
	raw, err := s.rdb.HGet(ctx, s.defsKey(), id).Bytes()
	if errors.Is(err, redis.Nil) {
		return d, fmt.Errorf("%w: %q", checkpoints.ErrNoDefinition, id)
	}
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, fmt.Errorf("decode checkpoint definition %s: %w", id, err)
	}
	return d, nil
}

// CreateDefinition stores a new, valid definition, or returns
// checkpoints.ErrDefinitionExists and changes nothing when its id is taken.
func (s *Store) CreateDefinition(ctx context.Context, d checkpoints.Definition) error {
	raw, err := encodeDefinition(d)
	if err != nil {
		return err
	}
	ok, err := s.rdb.HSetNX(ctx, s.defsKey(), d.ID, raw).Result()
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %q", checkpoints.ErrDefinitionExists, d.ID)
	}
	return nil
}

// createDefinitionsScript stores definitions if none is stored at all.
// KEYS: defs. ARGV: pairs of id and JSON. Returns 1 stored, 0 not (some
// definition is stored already).
var createDefinitionsScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
`)

// CreateDefinitionsIfNone stores the valid definitions defs in one step if
// no definition is stored at all (a fresh Redis: three commands where a
// CreateDefinition each was one each), and reports whether it did; when
// some definition is stored already it writes nothing (the caller creates
// each one whose id is free).
func (s *Store) CreateDefinitionsIfNone(ctx context.Context, defs []checkpoints.Definition) (bool, error) {
	if len(defs) == 0 {
		return true, nil
	}
	args := make([]any, 0, 2*len(defs))
	for _, d := range defs {
		raw, err := encodeDefinition(d)
		if err != nil {
			return false, err
		}
		args = append(args, d.ID, raw)
	}
	n, err := createDefinitionsScript.Run(ctx, s.rdb, []string{s.defsKey()}, args...).Int()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// ResetBreaker forgets a definition's recorded failures, closing its
// breaker, and lets a later trip alert the admins again.
func (s *Store) ResetBreaker(ctx context.Context, defID string) error {
	return s.rdb.Del(ctx, s.failuresKey(defID), s.alertKey(defID)).Err()
}

// ClaimBreakerAlert reports whether the caller is the first to alert about
// the definition's tripped breaker since it was last reset (or since ttl
// passed): the one replica that sends the alert.
func (s *Store) ClaimBreakerAlert(ctx context.Context, defID string, ttl time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, s.alertKey(defID), s.clock.Now().UTC().Format(time.RFC3339), ttl).Result()
}

// encodeDefinition validates d and returns it as stored.
func encodeDefinition(d checkpoints.Definition) ([]byte, error) {
	if err := checkpoints.ValidateDefinition(d); err != nil {
		return nil, err
	}
	return json.Marshal(d)
}
