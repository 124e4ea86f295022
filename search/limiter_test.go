package search

import (
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/redisstore"
)

// TestRedisLimiterSharedAcrossReplicas runs two Multi instances, each with its
// own client and limiter as two replicas would, against one real redis-server:
// together they make no more calls than the per-minute budget.
func TestRedisLimiterSharedAcrossReplicas(t *testing.T) {
	srv, rdb := redistest.Start(t)
	other := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = other.Close() })

	limits := map[string]int{"arxiv": 3}
	arxivA := &stub{name: "arxiv", kinds: []Kind{KindAcademic}, results: []Result{{URL: "https://arxiv.org/abs/2101.00001"}}}
	arxivB := &stub{name: "arxiv", kinds: []Kind{KindAcademic}, results: []Result{{URL: "https://arxiv.org/abs/2101.00001"}}}
	freeA := &stub{name: "openalex", kinds: []Kind{KindAcademic}}
	m1 := NewMulti([]Backend{arxivA, freeA}, Options{Limiter: NewSharedLimiter(redisstore.NewRateLimiter(rdb, "search"), limits)})
	m2 := NewMulti([]Backend{arxivB}, Options{Limiter: NewSharedLimiter(redisstore.NewRateLimiter(other, "search"), limits)})

	limited := 0
	for i := range 6 {
		m := m1
		if i%2 == 1 {
			m = m2
		}
		out := m.Search(bg, Query{Text: "q", Kind: KindAcademic})
		for _, e := range out.Errors {
			if e.Backend != "arxiv" || !errors.Is(&e, ErrRateLimited) || e.RetryAfter <= 0 {
				t.Errorf("unexpected error %+v", e)
			}
			limited++
		}
	}
	if calls := arxivA.calls.Load() + arxivB.calls.Load(); calls != 3 {
		t.Errorf("arxiv called %d times across replicas, budget 3/min", calls)
	}
	if arxivA.calls.Load() == 0 || arxivB.calls.Load() == 0 {
		t.Errorf("calls a=%d b=%d: both replicas should have used the budget", arxivA.calls.Load(), arxivB.calls.Load())
	}
	if limited != 3 {
		t.Errorf("%d searches rate-limited, want 3", limited)
	}
	if freeA.calls.Load() != 3 {
		t.Errorf("unlimited backend called %d times, want 3", freeA.calls.Load())
	}
	if n, err := rdb.Exists(bg, "rb:rate:search:arxiv").Result(); err != nil || n != 1 {
		t.Errorf("rate key in Redis: %d, %v", n, err)
	}
}

func TestRedisLimiterRedisDown(t *testing.T) {
	srv, rdb := redistest.Start(t)
	_ = srv
	l := NewSharedLimiter(redisstore.NewRateLimiter(rdb, "search"), map[string]int{"arxiv": 1})
	_ = rdb.Close()
	if _, err := l.Allow(bg, "arxiv"); err == nil {
		t.Error("Allow with a closed client: no error")
	}
	if wait, err := l.Allow(bg, "unlimited"); err != nil || wait != 0 {
		t.Errorf("unlimited backend: %v, %v", wait, err)
	}
}

// TestAMultiWhoseLimiterLostRedisSaysTheLimiterFailed: with the rate
// budgets' Redis gone, the backend is not called and its error is
// ErrLimiterFailed (ours, not the backend's), naming Redis's error.
func TestAMultiWhoseLimiterLostRedisSaysTheLimiterFailed(t *testing.T) {
	_, rdb := redistest.Start(t)
	b := &stub{name: "arxiv", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://b.example/"}}}
	m := NewMulti([]Backend{b}, Options{Limiter: NewSharedLimiter(redisstore.NewRateLimiter(rdb, "search"), map[string]int{"arxiv": 20})})
	_ = rdb.Close()
	out := m.Search(bg, Query{Text: "q"})
	if b.calls.Load() != 0 || len(out.Errors) != 1 || !errors.Is(&out.Errors[0], ErrLimiterFailed) || !strings.Contains(out.Errors[0].Error(), "redis: client is closed") {
		t.Fatalf("calls %d, outcome %+v: want no call and ErrLimiterFailed with Redis's error", b.calls.Load(), out)
	}
}
