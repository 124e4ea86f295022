package redisstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
)

// boundedMap is a small concurrent map that forgets everything when it
// grows past its bound: it caches what can be recomputed, and a process
// must not grow with the number of runs it ever touched.
type boundedMap[V any] struct {
	mu    sync.Mutex
	max   int
	items map[string]V
}

func newBoundedMap[V any](limit int) *boundedMap[V] {
	return &boundedMap[V]{max: limit, items: map[string]V{}}
}

func (m *boundedMap[V]) get(k string) V {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.items[k]
}

func (m *boundedMap[V]) del(k string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.items, k)
}

func (m *boundedMap[V]) put(k string, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[k]; !ok && len(m.items) >= m.max {
		clear(m.items)
	}
	m.items[k] = v
}

// pop returns k's value, if any, and forgets it.
func (m *boundedMap[V]) pop(k string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[k]
	delete(m.items, k)
	return v, ok
}

// take reports whether k's value is v, and forgets k if it is.
func (m *boundedMap[V]) take(k string, v V, equal func(a, b V) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.items[k]; ok && equal(old, v) {
		delete(m.items, k)
		return true
	}
	return false
}

// raise sets k's value to v if k is known and v is higher.
func (m *boundedMap[V]) raise(k string, v V, higher func(a, b V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.items[k]; ok && higher(v, old) {
		m.items[k] = v
	}
}

// watermark is the highest version of run id this process has seen, or 0.
// Callers read it before they send the read whose reply they will check:
// a save that finished before the read was sent is visible in that reply,
// while one that finished while the reply was on its way is not (and is no
// loss).
func (s *Store) watermark(id string) int64 { return s.seen.get(id) }

// observeVersion reports, loudly, a stored version v of a run lower than
// floor, the watermark read before the read that returned v: Redis lost
// acknowledged writes (an append-only file rolled back after a crash, or a
// failover to a replica that was behind). The steps after the lost version
// will be done again; the log says so, so nobody is surprised by a second
// bill or a repeated message. The process then accepts v as the truth.
func (s *Store) observeVersion(id string, v, floor int64) {
	if floor > 0 && v < floor {
		s.log.Error("redisstore: a run's stored state went back in time; Redis lost acknowledged writes (an append-only file rolled back, or a failover to a replica that was behind). The steps after this version will be done again.",
			"run", id, "stored_version", v, "version_seen_before", floor)
		s.seen.put(id, v)
		if s.opts.OnLostWrites != nil {
			s.opts.OnLostWrites(id, v, floor)
		}
		return
	}
	s.seen.raise(id, v, func(a, b int64) bool { return a > b })
}

// isDialError reports whether err is a failure to connect: nothing was sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// keys returns the keys m holds now.
func (m *boundedMap[V]) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.items))
	for k := range m.items {
		out = append(out, k)
	}
	return out
}

// CheckLostWrites reads the stored version of every run this process has
// seen (one pipelined round trip) and reports each that went back in time
// (observeVersion: the loud log line and OnLostWrites). Called now and then
// by a process, it finds a rollback of runs nobody reads, such as runs
// waiting for a person, after Redis restarts from an older append-only file
// or fails over to a replica that was behind. A run that is gone is
// forgotten.
func (s *Store) CheckLostWrites(ctx context.Context) error {
	ids := s.seen.keys()
	if len(ids) == 0 {
		return nil
	}
	floors := make([]int64, len(ids))
	cmds := make([]*redis.StringCmd, len(ids))
	for i, id := range ids {
		floors[i] = s.watermark(id)
	}
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, s.runKey(id), "v")
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	for i, id := range ids {
		v, err := cmds[i].Result()
		if errors.Is(err, redis.Nil) {
			continue // deleted (pruned) or lost with its creation: nobody waits on it here
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		s.observeVersion(id, n, floors[i])
	}
	return nil
}
