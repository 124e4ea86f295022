package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// Locker gives one worker at a time the lease on a run (pipeline.Locker).
//
// The lease is a key holding the holder's random token, with a TTL; the
// holder refreshes it every TTL/3. Taking the lease increments the run's
// fencing token (the "fence" field of the run's hash) in the same script,
// and every save of the holder carries that token, checked by the save
// script in the same step as the version: a worker that lost its lease
// without knowing (a long pause, a partition) cannot overwrite the run.
//
// A holder that cannot refresh cancels its context (cause
// pipeline.ErrLeaseLost) at once when the lease is gone, and otherwise at
// the latest 2/3 of a TTL after its last good refresh — before anyone else
// could take the lease — so its step stops and makes no call nobody will
// record. bsm/redislock has no fencing token, so this small lease is ours.
type Locker struct {
	rdb    *redis.Client
	prefix string
	ttl    time.Duration
	// givenBack, shared with the Store of the same DB (nil otherwise), are
	// the leases a finished run's last save gave back (see saveScript).
	givenBack *boundedMap[int64]
	// takenProbes, shared with the Store of the same DB (nil otherwise),
	// are what the run's hash said when its lease was last taken here
	// (acquireScript): the first read under the lease (LoadForStep) of a
	// run this process created uses it instead of asking again.
	takenProbes *boundedMap[pipeline.StepProbe]
	// created, shared with the Store of the same DB (nil otherwise), are
	// the leases its creates took for this process's worker (CreateLeased),
	// which Lock adopts from memory (adopt).
	created *createdLeases
}

// NewLocker returns a Locker; ttl is the lease (default 15 s).
func NewLocker(rdb *redis.Client, prefix string, ttl time.Duration) *Locker {
	prefix = cmp.Or(prefix, DefaultPrefix)
	if ttl <= 0 {
		ttl = 15 * time.Second
	}
	return &Locker{rdb: rdb, prefix: prefix, ttl: ttl}
}

var _ pipeline.Locker = (*Locker)(nil)

func (l *Locker) lockKey(runID string) string { return leaseKey(l.prefix, runID) }
func (l *Locker) runKey(runID string) string  { return l.prefix + "run:" + runID }

// TTL is the lease duration.
func (l *Locker) TTL() time.Duration { return l.ttl }

// Held reports whether some worker holds the run's lease now.
func (l *Locker) Held(ctx context.Context, runID string) (bool, error) {
	n, err := l.rdb.Exists(ctx, l.lockKey(runID)).Result()
	return n > 0, err
}

// acquireScript takes the lease and increments the run's fence.
// KEYS: lock, run. ARGV: token, ttl ms. Returns {the new fence, and the
// run's version, the nonce of the save that wrote it and its cancel
// request, read in the same step: what a worker's first read under the
// lease probes}, 0 when the lease is held by someone else, -1 when the run
// does not exist. A retried call that already took the lease gets its
// fence again (alone). (SET NX takes a free lease in one command; the
// holder is read only when it is taken.)
var acquireScript = newScript(`
local cur = redis.call('HMGET', KEYS[2], 'v', 'nonce', 'cancel')
if not cur[1] then return -1 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {redis.call('HINCRBY', KEYS[2], 'fence', 1), cur[1], cur[2] or '', cur[3] or ''}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then return tonumber(redis.call('HGET', KEYS[2], 'fence')) end
return 0
`)

// refreshScript extends the lease if it is still the caller's. KEYS: lock.
// ARGV: token, ttl ms. Returns 1 when extended, 0 when lost.
var refreshScript = newScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`)

// releaseScript deletes the lease if it is still the caller's. KEYS: lock. ARGV: token.
var releaseScript = newScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// Lock takes the run's lease, or returns pipeline.ErrLeaseBusy at once. The
// returned context is ctx, cancelled with pipeline.ErrLeaseLost when the
// lease cannot be kept, and cancelled when the lease is released.
//
// A lease the run's create took for this process's worker (Store's
// CreateLeased on the same DB) is adopted without a command while it is
// certainly still held (createdLease.adoptable), with the fence the create
// wrote; otherwise it is given back and the lease is taken as usual.
func (l *Locker) Lock(ctx context.Context, runID string) (context.Context, pipeline.Lease, error) {
	if lctx, ls, ok := l.adopt(ctx, runID); ok {
		return lctx, ls, nil
	}
	token := newLeaseToken()
	sent := time.Now()
	if l.takenProbes != nil {
		// What an earlier take read is not this lease's (a retried take
		// that found its lease taken already answers the fence alone).
		l.takenProbes.del(runID)
	}
	fence, probe, err := acquireReply(acquireScript.Run(ctx, l.rdb, []string{l.lockKey(runID), l.runKey(runID)}, token, l.ttl.Milliseconds()))
	if probe != nil && fence > 0 && l.takenProbes != nil {
		l.takenProbes.put(runID, *probe)
	}
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("lease run %s: %w", runID, err)
	case fence == 0:
		return nil, nil, fmt.Errorf("run %s: %w", runID, pipeline.ErrLeaseBusy)
	case fence < 0:
		return nil, nil, fmt.Errorf("lease run %s: %w", runID, pipeline.ErrNotFound)
	}
	lctx, ls := l.hold(ctx, runID, token, fence, sent)
	return lctx, ls, nil
}

// newLeaseToken returns a random lease token: the lease key's value, which
// only its holder knows.
func newLeaseToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hold returns the holding of the run's lease with token and fence, taken
// by a command sent at sent, and starts keeping it.
func (l *Locker) hold(ctx context.Context, runID, token string, fence int64, sent time.Time) (context.Context, *lease) {
	lctx, cancel := context.WithCancelCause(ctx)
	ls := &lease{l: l, runID: runID, token: token, fence: fence, cancel: cancel, stop: make(chan struct{})}
	ls.wg.Add(1)
	go ls.keep(sent) // owner: this lease; stopped by Release
	return lctx, ls
}

// acquireReply splits acquireScript's reply into the fence (or code) and,
// for a lease taken now, what the run's hash said then.
func acquireReply(cmd *redis.Cmd) (int64, *pipeline.StepProbe, error) {
	fence, hash, err := codeAndStrings(cmd, 3)
	if err != nil || hash == nil {
		return fence, nil, err
	}
	version, err := strconv.ParseInt(hash[0], 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("unexpected run version %q in the lease's reply", hash[0])
	}
	return fence, &pipeline.StepProbe{Version: version, SaveNonce: hash[1], CancelBy: hash[2]}, nil
}

// lease is one holding of a run's lease.
type lease struct {
	l      *Locker
	runID  string
	token  string
	fence  int64
	cancel context.CancelCauseFunc
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

func (ls *lease) Fence() int64 { return ls.fence }

// keep refreshes the lease every TTL/3 until Release, the first time TTL/3
// after the acquisition (an adopted lease was taken a moment before it was
// adopted). lastOK is when the last successful refresh (or the acquisition)
// was sent: the lease is certainly ours until lastOK+TTL, so the holder
// gives up at lastOK+2·TTL/3, a third of a TTL before anyone else could
// take the lease.
func (ls *lease) keep(lastOK time.Time) {
	defer ls.wg.Done()
	ttl := ls.l.ttl
	interval := ttl / 3
	giveUp := func() time.Time { return lastOK.Add(2 * ttl / 3) }
	wait := max(interval-time.Since(lastOK), time.Millisecond)
	for {
		t := time.NewTimer(wait)
		select {
		case <-ls.stop:
			t.Stop()
			return
		case <-t.C:
		}
		sent := time.Now()
		deadline := giveUp()
		if !sent.Before(deadline) {
			ls.cancel(fmt.Errorf("run %s: could not refresh the lease in time: %w", ls.runID, pipeline.ErrLeaseLost))
			return
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		ok, err := refreshScript.Run(ctx, ls.l.rdb, []string{ls.l.lockKey(ls.runID)}, ls.token, ttl.Milliseconds()).Int()
		cancel()
		switch {
		case err == nil && ok == 1:
			lastOK, wait = sent, interval
		case err == nil:
			ls.cancel(fmt.Errorf("run %s: the lease expired or was taken: %w", ls.runID, pipeline.ErrLeaseLost))
			return
		default:
			// Redis did not answer: try again soon, until the lease might be gone.
			wait = max(min(interval/4, time.Until(giveUp())), time.Millisecond)
		}
	}
}

// Release stops refreshing, cancels the lease's context and gives the lease
// back (if it is still ours), unless the run's last save gave it back
// already (the Store of the same DB says so).
func (ls *lease) Release() {
	ls.once.Do(func() {
		close(ls.stop)
		ls.wg.Wait()
		ls.cancel(nil)
		if p := ls.l.takenProbes; p != nil {
			p.del(ls.runID) // read under this lease only
		}
		if g := ls.l.givenBack; g != nil && g.take(ls.runID, ls.fence, func(a, b int64) bool { return a == b }) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), ls.l.ttl/3)
		defer cancel()
		_ = releaseScript.Run(ctx, ls.l.rdb, []string{ls.l.lockKey(ls.runID)}, ls.token).Err()
	})
}
