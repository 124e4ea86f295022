package redisstore

import (
	"cmp"
	"context"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// DefaultPrefix starts every key researchbot writes in Redis (the key table
// in doc.go): the prefix production uses, and what an empty prefix means.
const DefaultPrefix = "rb:"

// DB is researchbot's Redis opened once: every store and port the program
// keeps there is handed out by it, on one client and under one key prefix,
// so the prefix is written in one place (Open's caller).
type DB struct {
	conn   *Conn
	prefix string
	// givenBack is shared by the Store and the Locker it hands out: the
	// leases a finished run's last save gave back, which Release then
	// does not give back again (see saveScript).
	givenBack *boundedMap[int64]
	// takenProbes is shared by the Locker and the Store it hands out: what
	// a run's hash said when its lease was taken (see LoadForStep).
	takenProbes *boundedMap[pipeline.StepProbe]
	// created is shared by the Store and the Locker it hands out: the
	// leases a create took for this process's worker (see CreateLeased).
	created *createdLeases
	// private is shared by the Store and the Workers it hands out: the
	// private queues of this process's NewQueues workers, forgotten by the
	// final save of their last run (see privatequeue.go).
	private *privateQueues
}

// Open returns the stores of the Redis of conn under prefix ("" means
// DefaultPrefix). The prefix namespaces the stores' keys (runs, leases,
// definitions, streams, conversations, channel defaults); the ports (rate
// budgets, page cache, Slack memory) keep their own fixed keys (doc.go). The caller closes conn; Open opens nothing.
func Open(conn *Conn, prefix string) *DB {
	prefix = cmp.Or(prefix, DefaultPrefix)
	return &DB{conn: conn, prefix: prefix, givenBack: newBoundedMap[int64](1024), takenProbes: newBoundedMap[pipeline.StepProbe](1024),
		created: newCreatedLeases(), private: newPrivateQueues()}
}

// Ping reports whether the Redis answers (a readiness check).
func (d *DB) Ping(ctx context.Context) error { return d.conn.Client.Ping(ctx).Err() }

// Store returns the runs' store; opts.Prefix is the DB's.
func (d *DB) Store(opts StoreOptions) *Store {
	opts.Prefix = d.prefix
	s := NewStoreWithOptions(d.conn.Client, opts)
	s.givenBack, s.takenProbes, s.createdLeases, s.private = d.givenBack, d.takenProbes, d.created, d.private
	return s
}

// Queue returns the work queue (the store's indexes, see Queue); opts.Prefix is the DB's.
func (d *DB) Queue(opts QueueOptions) *Queue {
	opts.Prefix = d.prefix
	return NewQueue(d.conn.Client, opts)
}

// Worker returns a worker that advances runs from the queues of opts;
// opts.Prefix is the DB's. The queues of a NewQueues worker are this
// process's own from now on: the Stores of d count the runs created there,
// and the final save of the last one forgets the queue (privatequeue.go).
func (d *DB) Worker(adv Advancer, opts WorkerOptions) *Worker {
	opts.Prefix = d.prefix
	if opts.NewQueues {
		d.private.register(opts.Queues)
	}
	return NewWorker(d.conn.Client, adv, opts)
}

// Locker returns the runs' leases; ttl is the lease (RUN_LEASE).
func (d *DB) Locker(ttl time.Duration) *Locker {
	l := NewLocker(d.conn.Client, d.prefix, ttl)
	l.givenBack, l.takenProbes, l.created = d.givenBack, d.takenProbes, d.created
	d.created.ttl.Store(int64(l.ttl)) // a create takes leases of this length from now on
	return l
}

// Streams returns the research streams' store.
func (d *DB) Streams() *Streams { return NewStreams(d.conn.Client, d.prefix) }

// Conversations returns the streams' creation conversations; ttl 0 means
// DefaultConversationTTL.
func (d *DB) Conversations(ttl time.Duration) *Conversations {
	return NewConversations(d.conn.Client, d.prefix, ttl)
}

// ChannelDefaults returns the start form's per-channel defaults.
func (d *DB) ChannelDefaults() *ChannelDefaults { return NewChannelDefaults(d.conn.Client, d.prefix) }

// RateLimiter returns the rate budgets of area (llm, search, slack).
func (d *DB) RateLimiter(area string) *RateLimiter { return NewRateLimiter(d.conn.Client, area) }

// PageCache returns fetch's page cache.
func (d *DB) PageCache() *PageCache { return NewPageCache(d.conn.Client) }

// SlackMemory returns the Slack adapter's memory.
func (d *DB) SlackMemory() *SlackMemory { return NewSlackMemory(d.conn.Client) }
