package search

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/redisstore"
)

var _ RateBudget = (*redisstore.RateLimiter)(nil)

// rateScriptRuns is how many rate-limit scripts the server has run (EVAL
// and EVALSHA, INFO commandstats): one per ask of a budget.
func rateScriptRuns(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_eval" && name != "cmdstat_evalsha") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.Atoi(v)
				runs += n
			}
		}
	}
	return runs
}

// searchAll searches qs at once through r, as a search step does.
func searchAll(r *Reservation, qs []Query) []Outcome {
	outs := make([]Outcome, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.Search(bg, q)
		}()
	}
	wg.Wait()
	return outs
}

// queries is n queries of kind.
func queries(n int, kind Kind) []Query {
	qs := make([]Query, n)
	for i := range qs {
		qs[i] = Query{Text: "query " + strconv.Itoa(i), Kind: kind}
	}
	return qs
}

// TestQueriesReservedTogetherAskEachBudgetOnce: the queries of one step,
// reserved together, ask each backend's shared budget once for all of
// them — five web queries and two academic ones make two script runs, not
// seven — and every query calls its backend; a backend only one query
// calls asks for it when searched, as without a reservation. The budget is
// spent exactly by the calls made.
func TestQueriesReservedTogetherAskEachBudgetOnce(t *testing.T) {
	_, rdb := redistest.Start(t)
	web := &stub{name: "searxng", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://w.example/"}}}
	acad := &stub{name: "arxiv", kinds: []Kind{KindAcademic}, results: []Result{{URL: "https://a.example/"}}}
	news := &stub{name: "news", kinds: []Kind{KindNews}, results: []Result{{URL: "https://n.example/"}}}
	budget := redisstore.NewRateLimiter(rdb, "search")
	m := NewMulti([]Backend{web, acad, news}, Options{Limiter: NewSharedLimiter(budget, map[string]int{"searxng": 5, "arxiv": 20, "news": 20})})

	qs := append(append(queries(5, KindWeb), queries(2, KindAcademic)...), Query{Text: "news", Kind: KindNews}, Query{Text: " ", Kind: KindWeb})
	r := m.Reserve(bg, qs)
	if got := rateScriptRuns(t, rdb); got != 2 {
		t.Errorf("reserving for 5 web, 2 academic and 1 news queries ran %d rate scripts, want 2 (one per backend asked twice or more)", got)
	}
	for _, out := range searchAll(r, qs) {
		if len(out.Errors) > 0 {
			t.Errorf("search failed: %+v", out.Errors)
		}
	}
	if got := rateScriptRuns(t, rdb); got != 3 {
		t.Errorf("%d rate scripts after the searches, want 3 (the news query asks alone)", got)
	}
	if web.calls.Load() != 5 || acad.calls.Load() != 2 || news.calls.Load() != 1 {
		t.Errorf("backend calls searxng %d, arxiv %d, news %d; want 5, 2, 1", web.calls.Load(), acad.calls.Load(), news.calls.Load())
	}
	if wait, err := budget.Allow(bg, "searxng", 5, time.Minute); err != nil || wait <= 0 {
		t.Errorf("a sixth searxng call in the minute: wait %v (%v), want refused (5 taken)", wait, err)
	}
}

// TestABudgetThatCannotHoldEveryQueryLetsEachAskAlone: when the budget has
// room for fewer calls than the step's queries, the reservation takes none,
// and each query asks alone as it did without one: as many are searched as
// the budget holds, the others are refused with ErrBudgetSpent, none for
// the others' sake.
func TestABudgetThatCannotHoldEveryQueryLetsEachAskAlone(t *testing.T) {
	_, rdb := redistest.Start(t)
	web := &stub{name: "searxng", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://w.example/"}}}
	budget := redisstore.NewRateLimiter(rdb, "search")
	m := NewMulti([]Backend{web}, Options{Limiter: NewSharedLimiter(budget, map[string]int{"searxng": 6})})
	if wait, err := budget.AllowN(bg, "searxng", 3, 6, time.Minute); err != nil || wait != 0 {
		t.Fatalf("spending 3 of 6: wait %v (%v)", wait, err)
	}

	qs := queries(5, KindWeb)
	r := m.Reserve(bg, qs)
	if r.left["searxng"] != 0 {
		t.Fatalf("reserved %d calls with 3 left, want none", r.left["searxng"])
	}
	refused := 0
	for _, out := range searchAll(r, qs) {
		for _, e := range out.Errors {
			if !errors.Is(&e, ErrBudgetSpent) || !e.RateLimited || e.RetryAfter <= 0 {
				t.Errorf("unexpected error %+v", e)
			}
			refused++
		}
	}
	if web.calls.Load() != 3 || refused != 2 {
		t.Errorf("3 calls left, 5 queries: %d searched, %d refused; want 3 and 2", web.calls.Load(), refused)
	}
}

// TestAReservedCallNotUsedIsSpent: a reserved call whose query does not
// call the backend is spent, never given back: the budget is over-spent
// by it, never under-spent. A backend cooling down (the service asked to
// wait) reserves nothing.
func TestAReservedCallNotUsedIsSpent(t *testing.T) {
	_, rdb := redistest.Start(t)
	web := &stub{name: "searxng", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://w.example/"}}}
	budget := redisstore.NewRateLimiter(rdb, "search")
	m := NewMulti([]Backend{web}, Options{Limiter: NewSharedLimiter(budget, map[string]int{"searxng": 3})})

	qs := queries(3, KindWeb)
	r := m.Reserve(bg, qs)
	searchAll(r, qs[:2])
	if wait, err := budget.Allow(bg, "searxng", 3, time.Minute); err != nil || wait <= 0 {
		t.Errorf("after 2 of 3 reserved calls were made: wait %v (%v), want refused (the third is spent)", wait, err)
	}

	m.mu.Lock()
	m.cooldown["searxng"] = m.opts.Clock.Now().Add(time.Hour)
	m.mu.Unlock()
	before := rateScriptRuns(t, rdb)
	if r := m.Reserve(bg, qs); r.left["searxng"] != 0 || rateScriptRuns(t, rdb) != before {
		t.Errorf("a backend cooling down reserved %d calls with %d script runs, want none", r.left["searxng"], rateScriptRuns(t, rdb)-before)
	}
}

// TestAReservationWhoseLimiterFailedLeavesTheFailureToTheSearches: with the
// budgets' Redis gone, nothing is reserved, and each search meets the
// failure as without a reservation: the backend is not called, and its
// error is ErrLimiterFailed with Redis's error. A limiter that refuses the
// calls together reserves nothing, and is asked once per call.
func TestAReservationWhoseLimiterFailedLeavesTheFailureToTheSearches(t *testing.T) {
	_, rdb := redistest.Start(t)
	b := &stub{name: "searxng", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://b.example/"}}}
	m := NewMulti([]Backend{b}, Options{Limiter: NewSharedLimiter(redisstore.NewRateLimiter(rdb, "search"), map[string]int{"searxng": 20})})
	_ = rdb.Close()
	qs := queries(3, KindWeb)
	for _, out := range searchAll(m.Reserve(bg, qs), qs) {
		if len(out.Errors) != 1 || !errors.Is(&out.Errors[0], ErrLimiterFailed) || !strings.Contains(out.Errors[0].Error(), "redis: client is closed") {
			t.Errorf("outcome %+v: want ErrLimiterFailed with Redis's error", out)
		}
	}
	if b.calls.Load() != 0 {
		t.Errorf("backend called %d times with its limiter failing", b.calls.Load())
	}

	l := &scriptedLimiter{refuseTogether: true}
	m = NewMulti([]Backend{b}, Options{Limiter: l})
	searchAll(m.Reserve(bg, qs), qs)
	if len(l.asked) != 3 || b.calls.Load() != 3 {
		t.Errorf("a limiter refusing the calls together was asked %d times for 3 calls made %d; want 3 and 3", len(l.asked), b.calls.Load())
	}
}
