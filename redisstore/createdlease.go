package redisstore

// A run's lease taken by its create for this process's worker: Store's
// CreateLeased takes it in the create script, and the Locker of the same
// DB adopts it from memory at the worker's first Lock, while it is
// certainly still held (see createdLeases.adopt).

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// createdLease is a lease a create took: its token and fence, the lease's
// TTL, when the create was sent (on this process's clock: the lease is
// certainly held until takenAt+ttl), and what the run's hash said then
// (what a take reads, for the first LoadForStep).
type createdLease struct {
	token   string
	fence   int64
	ttl     time.Duration
	takenAt time.Time
	probe   pipeline.StepProbe
}

// createdLeases is shared by the Store and the Locker of one DB: the
// lease's TTL (the Locker's, known once DB.Locker was called: until then
// no create takes a lease) and the leases creates took that no Lock
// adopted yet.
type createdLeases struct {
	ttl    atomic.Int64 // nanoseconds; 0: no Locker yet
	now    func() time.Time
	leases *boundedMap[createdLease]
}

func newCreatedLeases() *createdLeases {
	return &createdLeases{now: time.Now, leases: newBoundedMap[createdLease](1024)}
}

// take returns (and forgets) the lease a create took for runID, if any.
func (c *createdLeases) take(runID string) (createdLease, bool) {
	return c.leases.pop(runID)
}

// adoptable reports whether a Locker whose lease is ttl may hold cl as its
// own now, without asking Redis: the lease is the same length, and it was
// taken less than a third of it ago. A lease taken at takenAt is certainly
// held until takenAt+ttl; the holder's first refresh then comes at the
// latest at takenAt+2·ttl/3, when a holder that cannot refresh gives up
// (lease.keep, started from takenAt), still a third of a TTL before anyone
// else could take the lease — as for a lease taken by the Locker itself.
// An older one is given back and taken again.
func (cl createdLease) adoptable(ttl time.Duration, now time.Time) bool {
	age := now.Sub(cl.takenAt)
	return cl.ttl == ttl && age >= 0 && age < ttl/3
}

// adopt returns the lease a create of this process took for runID as a
// holding of l, or ok false when there is none or it may no longer be
// held (then it is given back, if it is still the create's, so that the
// caller takes the lease anew).
func (l *Locker) adopt(ctx context.Context, runID string) (context.Context, pipeline.Lease, bool) {
	if l.created == nil {
		return nil, nil, false
	}
	cl, ok := l.created.take(runID)
	if !ok {
		return nil, nil, false
	}
	if !cl.adoptable(l.ttl, l.created.now()) {
		rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
		defer cancel()
		_ = releaseScript.Run(rctx, l.rdb, []string{l.lockKey(runID)}, cl.token).Err()
		return nil, nil, false
	}
	if l.takenProbes != nil {
		// What the create wrote is what a take would have read: the
		// create took the lease in the same step.
		l.takenProbes.put(runID, cl.probe)
	}
	lctx, ls := l.hold(ctx, runID, cl.token, cl.fence, cl.takenAt)
	return lctx, ls, true
}
