package redisstore

import (
	"errors"
	"net"
	"sync"
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
		return
	}
	s.seen.raise(id, v, func(a, b int64) bool { return a > b })
}

// isDialError reports whether err is a failure to connect: nothing was sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
