package redisstore

// Cancel requests: RequestCancel records one where every reader finds
// it, and CancelRequested reads it.

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// cancelScript records a cancel request: in its own key ({p}cancel:{id}),
// which every version reads, and in the run's hash ("cancel"), which a
// worker's probe between steps reads with the version in one command. A
// run that does not exist gets no hash. KEYS: cancel, run. ARGV: by, ttl ms.
var cancelScript = newScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'cancel', ARGV[1]) end
return 1
`)

// RequestCancel marks a run to stop at its next step boundary.
func (s *Store) RequestCancel(ctx context.Context, runID, by string) error {
	if by == "" {
		by = "someone"
	}
	return cancelScript.Run(ctx, s.rdb, []string{s.cancelKey(runID), s.runKey(runID)}, by, (30 * 24 * time.Hour).Milliseconds()).Err()
}

// CancelRequested reports who asked to cancel the run, or "".
func (s *Store) CancelRequested(ctx context.Context, runID string) (string, error) {
	by, err := s.rdb.Get(ctx, s.cancelKey(runID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return by, err
}
