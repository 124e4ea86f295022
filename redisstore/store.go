package redisstore

// The Store: its options and defaults, its construction, the names of its
// keys, and Ping.

import (
	"cmp"
	"context"
	"log/slog"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// Default retention of finished runs and of their page texts.
const (
	DefaultRetention     = 30 * 24 * time.Hour
	DefaultPageRetention = 7 * 24 * time.Hour
	DefaultIndexRefresh  = time.Second
)

// StoreOptions configure a Store. Zero values take the defaults.
type StoreOptions struct {
	// Prefix namespaces the keys ("" = "rb:").
	Prefix string
	// Retention is how long a finished run is kept after its outcome was
	// shown (default DefaultRetention).
	Retention time.Duration
	// PageRetention is how long the extracted page texts of a finished run
	// are kept (default DefaultPageRetention, at most Retention).
	PageRetention time.Duration
	// IndexRefresh is how old the scores of a run's entries in the active,
	// work and timer indexes may grow before a save rewrites them though
	// nothing they say of the run changed (default DefaultIndexRefresh).
	// Keep it well under half a lease: a claim pass takes a run with work
	// whose score is older than that (it skips one whose lease is held, and
	// a duplicate advance is harmless: the lease serialises).
	IndexRefresh time.Duration
	// Logger receives the loud report of a run whose stored version went
	// backwards (Redis lost writes).
	Logger *slog.Logger
	// OnLostWrites, when set, is told of each run whose stored version was
	// found lower than one this process saw (after the loud log line), so
	// the engine can offer its checkpoint again. It must not block: it is
	// called on the read that found the loss.
	OnLostWrites func(runID string, stored, seen int64)
	// Clock drives Watch's safety-net check and stamps breaker alerts
	// (default the real clock).
	Clock quartz.Clock
	// OnWatchSubscribe, when set, is told each time a Watch subscribes to
	// a run's channel (Watch at its start, WatchAdvancedHere once the run
	// is not carried here): another process may change the run from then
	// on, and wake its queue (Worker.Listen). It must not block.
	OnWatchSubscribe func(runID string)
}

// Store implements pipeline.Store on Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
	opts   StoreOptions
	log    *slog.Logger
	clock  quartz.Clock
	// texts remembers which page texts are stored, so a save sends only new ones.
	texts *boundedMap[map[int]bool]
	// seen is the highest version this process has seen of each run.
	seen *boundedMap[int64]
	// watchers are this process's Watches, told of its saves in memory.
	watchers localWatchers
	// created holds the runs this process created and has not read or
	// saved since, as written (see LoadForStep).
	created *boundedMap[createdRun]
	// givenBack, shared with the Locker of the same DB (nil otherwise),
	// notes the leases a save gave back (run id → fence; see saveScript).
	givenBack *boundedMap[int64]
	// takenProbes, shared with the Locker of the same DB (nil otherwise):
	// what a run's hash said when its lease was last taken here.
	takenProbes *boundedMap[pipeline.StepProbe]
	// createdLeases, shared with the Locker of the same DB (nil
	// otherwise): the leases CreateLeased took, for that Locker to adopt.
	createdLeases *createdLeases
	// private, shared with the Workers of the same DB (nil otherwise):
	// this process's private queues and their runs not finished and shown,
	// so the last one's final save forgets the queue (privatequeue.go).
	private *privateQueues
	// createdForWatch holds the runs CreateLeased created, as written,
	// until a Watch of this Store starts (it sends them first, see watch).
	createdForWatch *boundedMap[[]byte]
}

// createdRun is a run as Create wrote it: its record and the nonce of the write.
type createdRun struct {
	data  []byte
	nonce string
}

// NewStoreWithOptions returns a Store using rdb.
func NewStoreWithOptions(rdb *redis.Client, opts StoreOptions) *Store {
	opts.Prefix = cmp.Or(opts.Prefix, DefaultPrefix)
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.PageRetention <= 0 {
		opts.PageRetention = DefaultPageRetention
	}
	opts.PageRetention = min(opts.PageRetention, opts.Retention)
	if opts.IndexRefresh <= 0 {
		opts.IndexRefresh = DefaultIndexRefresh
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clock := opts.Clock
	if clock == nil {
		clock = quartz.NewReal()
	}
	return &Store{rdb: rdb, prefix: opts.Prefix, opts: opts, log: log, clock: clock,
		texts: newBoundedMap[map[int]bool](4096), seen: newBoundedMap[int64](65536),
		created: newBoundedMap[createdRun](256), createdForWatch: newBoundedMap[[]byte](256)}
}

func (s *Store) runKey(id string) string       { return s.prefix + "run:" + id }
func (s *Store) pagesKey(id string) string     { return s.prefix + "run:" + id + ":pages" }
func (s *Store) cancelKey(id string) string    { return s.prefix + "cancel:" + id }
func (s *Store) workKey(queue string) string   { return workIndexKey(s.prefix, queue) }
func (s *Store) timersKey(queue string) string { return timersIndexKey(s.prefix, queue) }

// workIndexKey is the key of queue's index of runs with work (the queue:
// the save script writes it; workers claim from it).
func workIndexKey(prefix, queue string) string { return prefix + "work:" + queue }

// timersIndexKey is the key of queue's index of checkpoint deadlines.
func timersIndexKey(prefix, queue string) string { return prefix + "timers:" + queue }

// leaseKey is the key of a run's lease (Locker); the claim and stats
// scripts name leases from leaseKey(prefix, "") and the run's id.
func leaseKey(prefix, runID string) string  { return prefix + "lock:run:" + runID }
func (s *Store) userKey(user string) string { return s.prefix + "runs:by:" + user }

// savedChannel is the pub/sub channel on which a save announces the run's
// new version (not a key: it stores nothing).
func (s *Store) savedChannel(id string) string { return s.prefix + "saved:" + id }

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }
