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

func newBoundedMap[V any](max int) *boundedMap[V] {
	return &boundedMap[V]{max: max, items: map[string]V{}}
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

// observeVersion reports, loudly, a stored version of a run lower than one
// this process saved before (it remembers the versions of the runs it
// saves until they are finished and shown): Redis lost writes (an append-only
// file rolled back after a crash, or a failover to a replica that was
// behind). The steps after the lost version will be done again; the log
// says so, so nobody is surprised by a second bill or a repeated message.
func (s *Store) observeVersion(id string, v int64) {
	s.seen.mu.Lock()
	high, ok := s.seen.items[id]
	s.seen.mu.Unlock()
	if ok && v < high {
		s.log.Error("redisstore: a run's stored state went back in time; Redis lost acknowledged writes (an append-only file rolled back, or a failover to a replica that was behind). The steps after this version will be done again.",
			"run", id, "stored_version", v, "version_seen_before", high)
	}
	if ok && v != high {
		s.seen.put(id, v)
	}
}

// isDialError reports whether err is a failure to connect: nothing was sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
