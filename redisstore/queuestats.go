package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// QueueStat is one work queue at a moment, read from the store's indexes
// (the queue): Pending runs have work and no worker (or a deadline that
// has come and no worker), Active ones are leased by a worker, Scheduled
// ones wait for a checkpoint deadline still to come, Retry ones wait in
// this process for a retry at their time, and Latency is how long the
// oldest pending run with work has gone without a worker (since its last
// save).
type QueueStat struct {
	Pending, Active, Scheduled, Retry int
	Latency                           time.Duration
}

// statsScript counts one queue's runs by what they wait for.
// KEYS: work, timers. ARGV: the lease keys' prefix (leaseKey(p, "")), now ms.
// Returns pending, active, scheduled, the oldest pending run's last save
// (ms, or -1). It looks at the first 10 000 entries of each index.
var statsScript = newScript(`
local pending, active, oldest = 0, 0, -1
local seen = {}
local work = redis.call('ZRANGE', KEYS[1], 0, 9999, 'WITHSCORES')
for i = 1, #work, 2 do
  local id = work[i]
  seen[id] = true
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then
    active = active + 1
  else
    pending = pending + 1
    if oldest < 0 then oldest = tonumber(work[i + 1]) end
  end
end
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'LIMIT', 0, 10000)
for _, id in ipairs(due) do
  if not seen[id] then
    if redis.call('EXISTS', ARGV[1] .. id) == 1 then active = active + 1 else pending = pending + 1 end
  end
end
local scheduled = redis.call('ZCOUNT', KEYS[2], '(' .. ARGV[2], '+inf')
return {pending, active, scheduled, tostring(oldest)}
`)

// Stats reports the given queues (for the metrics); a queue that has
// never held a run reports zeros.
func (q *Queue) Stats(ctx context.Context, queues []string) (map[string]QueueStat, error) {
	now := q.clock.Now()
	w := q.local.Load()
	out := make(map[string]QueueStat, len(queues))
	for _, name := range queues {
		st, oldest, err := queueStat(ctx, q.rdb, q.prefix, name, now)
		if err != nil {
			return out, err
		}
		if oldest >= 0 {
			st.Latency = max(now.Sub(time.UnixMilli(oldest)), 0)
		}
		if w != nil && w.serves(name) {
			st.Retry = w.retries(name)
		}
		out[name] = st
	}
	return out, nil
}

// queueStat reads one queue's counts and its oldest pending run's last
// save (Unix ms, -1 for none).
func queueStat(ctx context.Context, rdb *redis.Client, prefix, name string, now time.Time) (QueueStat, int64, error) {
	res, err := statsScript.Run(ctx, rdb, []string{workIndexKey(prefix, name), timersIndexKey(prefix, name)}, leaseKey(prefix, ""), now.UnixMilli()).Slice()
	if err != nil || len(res) != 4 {
		return QueueStat{}, -1, err
	}
	n := func(v any) int { i, _ := v.(int64); return int(i) }
	oldest, _ := strconv.ParseInt(res[3].(string), 10, 64)
	return QueueStat{Pending: n(res[0]), Active: n(res[1]), Scheduled: n(res[2])}, oldest, nil
}

// OldestUnleased returns how long the oldest run with work in the worker's
// queues has gone without a worker: the time since its last save, for the
// oldest run nobody holds (0 when every such run is held).
func (w *Worker) OldestUnleased(ctx context.Context) (time.Duration, error) {
	now := w.clock.Now()
	var oldest time.Duration
	for _, name := range w.queues {
		_, ms, err := queueStat(ctx, w.rdb, w.opts.Prefix, name, now)
		if err != nil {
			return 0, err
		}
		if ms >= 0 {
			oldest = max(oldest, now.Sub(time.UnixMilli(ms)))
		}
	}
	return oldest, nil
}
