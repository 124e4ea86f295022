package redisstore

import (
	"cmp"
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// QueueOptions tune the queue. Zero values take the defaults.
type QueueOptions struct {
	// Prefix is the prefix of the store's keys, whose indexes are the
	// queue (DefaultPrefix when empty).
	Prefix string
	// Clock dates Stats' latency; nil means the real clock.
	Clock quartz.Clock
}

// Queue implements pipeline.Queue over the store's indexes.
//
// The queue is not a list of tasks: a run needs a worker exactly when the
// store's index of runs with work ({p}work:{queue}) names it, or its
// checkpoint's deadline in {p}timers:{queue} has passed, and the save
// script writes both with the run, atomically. Workers find such runs by
// themselves (Worker's claim passes and deadline timer). Wake and WakeAt
// are hints that only make that faster: the run is handed to this process's
// worker at once when it serves the queue and has a free slot (no Redis
// command at all), and otherwise a hint is published on the queue's wake
// channel ({p}wake:{queue}), which every worker serving the queue
// subscribes to. A hint that is lost costs latency, never the run.
type Queue struct {
	rdb    *redis.Client
	prefix string
	clock  quartz.Clock
	// local is the worker of this process that Wake hands wake-ups to
	// at once (RunLocally), or nil.
	local atomic.Pointer[Worker]
}

var _ pipeline.Queue = (*Queue)(nil)

// NewQueue returns a Queue on the Redis of rdb.
func NewQueue(rdb *redis.Client, opts QueueOptions) *Queue {
	opts.Prefix = cmp.Or(opts.Prefix, DefaultPrefix)
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	return &Queue{rdb: rdb, prefix: opts.Prefix, clock: opts.Clock}
}

// RunLocally makes Wake and WakeAt hand the runs and deadlines of w's
// queues to w at once.
func (q *Queue) RunLocally(w *Worker) { q.local.Store(w) }

// Wake asks a worker on queue to advance the run (saved, with its work,
// before this call: the index says what is to do). When this process
// serves the queue and its worker has a free slot, the worker starts at
// once and nothing is sent to Redis; wake-ups of a run the worker
// advances already collapse into that advance (it reads the run again
// after releasing its lease). Otherwise the run's id is published
// on the queue's wake channel, where every worker serving the queue
// hears it and the first with a free slot takes the run. If nobody hears
// it, a claim pass finds the run in the work index (within a lease).
func (q *Queue) Wake(ctx context.Context, queue, runID string) error {
	if w := q.local.Load(); w != nil && w.kick(queue, runID) {
		return nil
	}
	return q.rdb.Publish(ctx, wakeChannel(q.prefix, queue), runID).Err()
}

// RunsHereAtOnce reports whether a run of queue woken now (Wake) would be
// advanced by this process's worker at once, and could be by no other: the
// worker serves queue as a queue made for this process alone
// (WorkerOptions.NewQueues: a terminal run's private queue), has not
// stopped, and has a free slot. The engine then creates the run with its
// lease taken for that worker (Store.CreateLeased). A shared queue is never
// such a queue: any replica's worker may be the one to take its runs.
func (q *Queue) RunsHereAtOnce(queue string) bool {
	w := q.local.Load()
	return w != nil && w.opts.NewQueues && w.serves(queue) && w.hasFreeSlot()
}

// WakeAt tells the workers of queue that a run waits for the deadline at
// (the store's deadline index has it already, durably): this process's
// worker, when it serves the queue, arms its timer for it without a
// command; otherwise "t:<unix ms>" is published on the wake channel, and
// the workers that hear it arm theirs. Workers read the index after every
// pass too, so a lost hint only matters for a deadline closer than a pass.
func (q *Queue) WakeAt(ctx context.Context, queue string, at time.Time) error {
	if w := q.local.Load(); w != nil && w.serves(queue) {
		w.timers.armAt(ceilMilli(at))
		return nil
	}
	return q.rdb.Publish(ctx, wakeChannel(q.prefix, queue), timerHint+strconv.FormatInt(ceilMilli(at), 10)).Err()
}

// ceilMilli is t in Unix milliseconds, rounded up: a deadline kept in
// milliseconds is never before the deadline itself.
func ceilMilli(t time.Time) int64 {
	ns := t.UnixNano()
	ms := ns / 1e6
	if ns%1e6 > 0 {
		ms++
	}
	return ms
}
