package redisstore

import (
	"context"
	"strconv"
)

// claimScript picks the runs of one queue that need a worker and have
// none, and claims them for this caller, in one step:
//
//   - runs whose checkpoint deadline has come (timers index, score ≤ now);
//   - runs with work (work index) last saved before the settle time (a
//     fresh wake-up is taken through a hint, at once, by whoever heard it);
//
// skipping those whose lease key exists (a worker has them; it reads the
// run again when it releases the lease) and those claimed already. A claim
// is the key {p}claim:{id}, set NX with the claim window: replicas
// passing at the same moment do not all take the same run, a claimer that
// dies frees it when the window ends, and one whose advance ends gives it
// back (Worker.unclaim). At most n runs are claimed; it
// looks at no more than 1000 entries of each index per pass.
//
// It also returns the earliest deadline still to come (ms, or "" when
// none), for the caller's deadline timer.
//
// KEYS: work, timers. ARGV: the lease keys' prefix (leaseKey(p, "")),
// now ms, settle ms (claim work saved before it), claim window ms, n, the
// claim keys' prefix (claimKey(p, "")).
// The lease and claim keys of the runs found are named inside the script
// (researchbot runs on one Redis, with Sentinel at most, never Cluster).
var claimScript = newScript(`
local out = {}
local n = tonumber(ARGV[5])
local function try(ids)
  for _, id in ipairs(ids) do
    if #out >= n then return end
    if redis.call('EXISTS', ARGV[1] .. id) == 0 and
       redis.call('SET', ARGV[6] .. id, '1', 'NX', 'PX', ARGV[4]) then
      out[#out + 1] = id
    end
  end
end
local off = 0
while #out < n and off < 1000 do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'LIMIT', off, 100)
  try(ids)
  if #ids < 100 then break end
  off = off + 100
end
off = 0
while #out < n and off < 1000 do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3], 'LIMIT', off, 100)
  try(ids)
  if #ids < 100 then break end
  off = off + 100
end
local nxt = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
return {out, nxt[2] or ''}
`)

// claimKey is the key of a run's claim.
func claimKey(prefix, runID string) string { return prefix + "claim:" + runID }

// pass claims the runs of queues that need a worker, as many as w has free
// slots, and starts advancing them; it arms the deadline timer for the
// earliest deadline still to come. A periodic pass also looks after
// abandoned queues. It returns how many runs it claimed.
func (w *Worker) pass(ctx context.Context, queues []string, periodic bool) (int, error) {
	now := w.clock.Now()
	ttl := w.opts.Lease
	started := 0
	var next int64
	for _, q := range queues {
		free := cap(w.slots) - len(w.slots)
		res, err := claimScript.Run(ctx, w.rdb, []string{workIndexKey(w.opts.Prefix, q), timersIndexKey(w.opts.Prefix, q)},
			leaseKey(w.opts.Prefix, ""), now.UnixMilli(), now.Add(-ttl/2).UnixMilli(), ttl.Milliseconds(), free, claimKey(w.opts.Prefix, "")).Slice()
		if err != nil {
			return started, err
		}
		ids, _ := res[0].([]any)
		for _, id := range ids {
			if s, ok := id.(string); ok {
				// A slot taken meanwhile (a wake-up) leaves the run for the
				// next free one: it is claimed for this worker now.
				w.take(pending{queue: q, run: s, claimed: true})
				started++
				w.log.Info("took a run that had work and no worker", "run", s, "queue", q)
			}
		}
		if s, _ := res[1].(string); s != "" {
			if ms, err := strconv.ParseInt(s, 10, 64); err == nil && (next == 0 || ms < next) {
				next = ms
			}
		}
	}
	if next > 0 {
		w.timers.armAt(next)
	}
	if periodic && w.opts.Abandoned != nil && w.opts.Interrupter != nil {
		if err := w.interruptAbandoned(ctx, now); err != nil {
			return started, err
		}
	}
	return started, nil
}

// PassOnce runs one periodic claim pass over the worker's queues now (as
// Start's loop does every half lease) and says how many runs it claimed.
func (w *Worker) PassOnce(ctx context.Context) (int, error) {
	return w.pass(ctx, w.queues, true)
}
