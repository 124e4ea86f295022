package redisstore

// Cancel requests: RequestCancel records one where every reader finds
// it (LoadForStep and ProbeForStep read it).

import (
	"cmp"
	"context"
	"time"
)

// cancelScript records a cancel request: in its own key ({p}cancel:{id}),
// which every version reads, and in the run's hash ("cancel"), which a
// worker's save (saveScript) and probe (ProbeForStep) read with the
// version in one command. A
// run that does not exist gets no hash. A run that exists is put in its
// queue's work index (scored now) and its index note ("ix") says so, so
// the next save takes it out again: the index is the queue, and the
// request must reach a worker even if no wake-up does.
// KEYS: cancel, run. ARGV: by, ttl ms, the work indexes' prefix
// (workIndexKey(p, ""): the run's queue is read from the run), now ms, id.
var cancelScript = newScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[2], 'cancel', ARGV[1])
  local cur = redis.call('HMGET', KEYS[2], 'data', 'ix')
  local ok, run = pcall(cjson.decode, cur[1] or '')
  if ok and type(run) == 'table' and type(run.origin) == 'table' then
    local q = run.origin.queue
    if type(q) ~= 'string' then q = '' end
    redis.call('ZADD', ARGV[3] .. q, 'NX', ARGV[4], ARGV[5])
    local ix = cur[2] or '00:0'
    redis.call('HSET', KEYS[2], 'ix', string.sub(ix, 1, 1) .. '1' .. string.sub(ix, 3))
  end
end
return 1
`)

// RequestCancel marks a run to stop at its next step boundary.
func (s *Store) RequestCancel(ctx context.Context, runID, by string) error {
	by = cmp.Or(by, "someone")
	return cancelScript.Run(ctx, s.rdb, []string{s.cancelKey(runID), s.runKey(runID)}, by, (30 * 24 * time.Hour).Milliseconds(),
		workIndexKey(s.prefix, ""), s.clock.Now().UnixMilli(), runID).Err()
}
