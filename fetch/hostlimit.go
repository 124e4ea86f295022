package fetch

import (
	"context"
	"sync"
)

// hostLimiter bounds concurrent fetches per host. Slots for a host exist only
// while someone holds or waits for one, so the map does not grow without bound.
type hostLimiter struct {
	n     int
	mu    sync.Mutex
	hosts map[string]*hostSlots
}

type hostSlots struct {
	ch   chan struct{}
	refs int
}

func newHostLimiter(n int) *hostLimiter {
	return &hostLimiter{n: n, hosts: make(map[string]*hostSlots)}
}

// acquire waits for a slot for host; the returned release must be called once.
func (l *hostLimiter) acquire(ctx context.Context, host string) (release func(), err error) {
	l.mu.Lock()
	s := l.hosts[host]
	if s == nil {
		s = &hostSlots{ch: make(chan struct{}, l.n)}
		l.hosts[host] = s
	}
	s.refs++
	l.mu.Unlock()

	select {
	case s.ch <- struct{}{}:
	case <-ctx.Done():
		l.unref(host, s)
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-s.ch
			l.unref(host, s)
		})
	}, nil
}

func (l *hostLimiter) unref(host string, s *hostSlots) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		delete(l.hosts, host)
	}
}
