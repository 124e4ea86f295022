package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
)

func (s *Store) defsKey() string                 { return s.prefix + "defs" }
func (s *Store) failuresKey(defID string) string { return s.prefix + "cpfail:" + defID }
func (s *Store) alertKey(defID string) string    { return s.prefix + "cpalert:" + defID }

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

// ResetBreaker forgets a definition's recorded failures, closing its
// breaker, and lets a later trip alert the admins again.
func (s *Store) ResetBreaker(ctx context.Context, defID string) error {
	return s.rdb.Del(ctx, s.failuresKey(defID), s.alertKey(defID)).Err()
}

// ClaimBreakerAlert reports whether the caller is the first to alert about
// the definition's tripped breaker since it was last reset (or since ttl
// passed): the one replica that sends the alert.
func (s *Store) ClaimBreakerAlert(ctx context.Context, defID string, ttl time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, s.alertKey(defID), time.Now().UTC().Format(time.RFC3339), ttl).Result()
}

// encodeDefinition validates d and returns it as stored.
func encodeDefinition(d checkpoints.Definition) ([]byte, error) {
	if err := checkpoints.ValidateDefinition(d); err != nil {
		return nil, err
	}
	return json.Marshal(d)
}
