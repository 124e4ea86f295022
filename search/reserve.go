package search

import (
	"context"
	"strings"
	"sync"
)

// Reservation is calls to backends taken from a Multi's limiter ahead of a
// set of queries (Multi.Reserve), so that queries searched together ask
// each backend's budget once, not once each. It is safe for concurrent use.
type Reservation struct {
	m    *Multi
	mu   sync.Mutex
	left map[string]int // calls still reserved, by backend name
}

// Reserve takes from the limiter, for each backend that two or more of qs
// will call, the calls they need in one ask (Limiter.AllowN), all or
// none, and returns them for the queries' searches (Reservation.Search).
// A backend whose budget has no room for them all, whose limiter fails,
// or that is cooling down (the service asked to wait) reserves nothing:
// each query then asks the limiter alone, as Multi.Search does, so none is
// refused for the others' sake and a failure is reported by the search
// that meets it. A backend asked by one query alone reserves nothing
// either (its one ask gains nothing by going ahead). Without a Limiter
// nothing is reserved.
//
// A reserved call is spent whether or not the backend is called: a query
// that does not call it (the service asked to wait meanwhile, the search
// was cancelled or never made) leaves its call unused, and the budget is
// over-spent by that call — at most one per query and backend reserved,
// never under-spent.
func (m *Multi) Reserve(ctx context.Context, qs []Query) *Reservation {
	r := &Reservation{m: m, left: map[string]int{}}
	limiter := m.opts.Limiter
	if limiter == nil {
		return r
	}
	need := map[string]int{}
	for _, q := range qs {
		if strings.TrimSpace(q.Text) == "" {
			continue // Search asks no backend
		}
		for _, b := range m.route(q.kind()) {
			need[b.Name()]++
		}
	}
	var wg sync.WaitGroup
	for name, n := range need {
		if n < 2 {
			continue
		}
		if _, cooling := m.coolingDown(name); cooling {
			continue
		}
		wg.Add(1)
		go func() { // owner: Reserve, which waits
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
			defer cancel()
			if wait, err := limiter.AllowN(ctx, name, n); err == nil && wait <= 0 {
				r.mu.Lock()
				r.left[name] = n
				r.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return r
}

// Search is Multi.Search, except that a backend call with a call reserved
// for its backend takes it instead of asking the limiter.
func (r *Reservation) Search(ctx context.Context, q Query) Outcome {
	return r.m.search(ctx, q, r)
}

// take takes one call reserved for backend, and says whether there was one
// (never on a nil Reservation).
func (r *Reservation) take(backend string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left[backend] <= 0 {
		return false
	}
	r.left[backend]--
	return true
}
