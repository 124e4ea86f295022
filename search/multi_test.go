package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// stub is an in-process Backend whose behaviour each test sets.
type stub struct {
	name    string
	kinds   []Kind
	results []Result
	err     error
	// block makes Search wait for ctx (a service that never answers).
	block bool
	panic bool

	calls    atomic.Int32
	inflight *atomic.Int32
	maxSeen  *atomic.Int32
	mu       sync.Mutex
	queries  []Query
}

func (s *stub) Name() string  { return s.name }
func (s *stub) Kinds() []Kind { return s.kinds }
func (s *stub) Search(ctx context.Context, q Query) ([]Result, error) {
	s.calls.Add(1)
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	if s.inflight != nil {
		n := s.inflight.Add(1)
		defer s.inflight.Add(-1)
		for {
			m := s.maxSeen.Load()
			if n <= m || s.maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s.panic {
		panic("boom")
	}
	if s.block {
		<-ctx.Done()
		return nil, fmt.Errorf("request: %w", ctx.Err())
	}
	return slices.Clone(s.results), s.err
}

func names(bs []Backend) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name())
	}
	return out
}

// TestMultiKindsAreItsBackendsKinds: each kind once, in backend order.
func TestMultiKindsAreItsBackendsKinds(t *testing.T) {
	m := NewMulti([]Backend{&stub{name: "news", kinds: []Kind{KindNews, KindWeb}}, &stub{name: "web", kinds: []Kind{KindWeb}}, &stub{name: "acad", kinds: []Kind{KindAcademic}}}, Options{})
	if got := m.Kinds(); !slices.Equal(got, []Kind{KindNews, KindWeb, KindAcademic}) {
		t.Errorf("kinds %v, want news, web, academic", got)
	}
}

func TestRoutingByKind(t *testing.T) {
	web := &stub{name: "web", kinds: []Kind{KindWeb}}
	news := &stub{name: "news", kinds: []Kind{KindNews, KindWeb}}
	acad := &stub{name: "acad", kinds: []Kind{KindAcademic}}
	m := NewMulti([]Backend{web, news, acad}, Options{})
	tests := []struct {
		kind Kind
		want []string
	}{
		{KindWeb, []string{"web", "news"}},
		{"", []string{"web", "news"}},
		{KindNews, []string{"news"}},
		{KindAcademic, []string{"acad"}},
	}
	for _, tt := range tests {
		if got := names(m.route(tt.kind)); !slices.Equal(got, tt.want) {
			t.Errorf("route(%q) = %v, want %v", tt.kind, got, tt.want)
		}
	}
	// Search really calls only the routed backends.
	m.Search(bg, Query{Text: "q", Kind: KindAcademic})
	if web.calls.Load() != 0 || news.calls.Load() != 0 || acad.calls.Load() != 1 {
		t.Errorf("calls web=%d news=%d acad=%d", web.calls.Load(), news.calls.Load(), acad.calls.Load())
	}
	// A kind nobody serves falls back to web backends.
	onlyWeb := NewMulti([]Backend{web}, Options{})
	if got := names(onlyWeb.route(KindAcademic)); !slices.Equal(got, []string{"web"}) {
		t.Errorf("fallback route = %v", got)
	}
	if got := m.Active(); !slices.Equal(got, []string{"web", "news", "acad"}) {
		t.Errorf("Active = %v", got)
	}
	// Limit defaults to 10 and Kind to web in what backends receive.
	m.Search(bg, Query{Text: "q"})
	if q := web.queries[0]; q.Limit != DefaultLimit || q.Kind != KindWeb {
		t.Errorf("backend received %+v", q)
	}
}

func TestMergeAndDedup(t *testing.T) {
	long := "Retrieval augmented generation grounds the answers of a language model in documents fetched at query time from an external corpus."
	a := &stub{name: "arxiv", kinds: []Kind{KindAcademic}, results: []Result{
		{URL: "http://arxiv.org/abs/2005.11401v4", Title: "RAG for NLP", Snippet: "abstract", Authors: []string{"P. Lewis"}},
		{URL: "https://example.org/a?utm_source=x", Title: "A"},
		{URL: "https://site-one.example/story", Title: "Syndicated", Snippet: long},
		{URL: "", Title: "no url"},
		{URL: "ftp://example.org/file", Title: "not http"},
	}}
	o := &stub{name: "openalex", kinds: []Kind{KindAcademic}, results: []Result{
		{URL: "https://doi.org/10.48550/arxiv.2005.11401", Title: "Retrieval-Augmented Generation", Citations: 4000, DOI: "10.48550/arXiv.2005.11401",
			Published: time.Date(2020, 5, 22, 0, 0, 0, 0, time.UTC)},
		{URL: "https://EXAMPLE.org/a/#x", Title: "A again"},
		{URL: "https://site-two.example/copy", Title: "SYNDICATED", Snippet: "“" + strings.ToUpper(long) + "”"},
		{URL: "https://example.org/b", Title: "B"},
	}}
	m := NewMulti([]Backend{a, o}, Options{})
	out := m.Search(bg, Query{Text: "rag", Kind: KindAcademic})
	if len(out.Errors) != 0 {
		t.Fatalf("errors: %v", out.Errors)
	}
	var urls []string
	for _, r := range out.Results {
		urls = append(urls, r.URL)
	}
	want := []string{"http://arxiv.org/abs/2005.11401v4", "https://example.org/a?utm_source=x", "https://site-one.example/story", "https://example.org/b"}
	if !slices.Equal(urls, want) {
		t.Fatalf("urls = %v, want %v", urls, want)
	}
	p := out.Results[0]
	if p.Backend != "arxiv" || p.Kind != KindAcademic || p.ArxivID != "2005.11401" || p.DOI != "10.48550/arxiv.2005.11401" || p.Citations != 4000 || p.Published.IsZero() {
		t.Errorf("merged paper = %+v", p)
	}
	if !slices.Equal(p.Authors, []string{"P. Lewis"}) || p.Title != "RAG for NLP" {
		t.Errorf("kept fields overwritten: %+v", p)
	}
	if out.Results[3].Backend != "openalex" {
		t.Errorf("backend of B = %q", out.Results[3].Backend)
	}
}

func TestInterleaveAndSince(t *testing.T) {
	old := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	sameDay := time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)
	fresh := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	x := &stub{name: "x", kinds: []Kind{KindWeb}, results: []Result{
		{URL: "https://x.example/1", Published: fresh},
		{URL: "https://x.example/2", Published: old},
		{URL: "https://x.example/3"},
	}}
	y := &stub{name: "y", kinds: []Kind{KindWeb}, results: []Result{
		{URL: "https://y.example/1", Published: sameDay},
	}}
	m := NewMulti([]Backend{x, y}, Options{})
	since := time.Date(2026, 11, 14, 15, 0, 0, 0, time.UTC)
	out := m.Search(bg, Query{Text: "q", Since: since})
	var urls []string
	for _, r := range out.Results {
		urls = append(urls, r.URL)
	}
	// Ranks interleave; the old one is dropped; the undated one and the one
	// from Since's day (date-only precision) are kept.
	want := []string{"https://x.example/1", "https://y.example/1", "https://x.example/3"}
	if !slices.Equal(urls, want) {
		t.Errorf("urls = %v, want %v", urls, want)
	}
	if !x.queries[0].Since.Equal(since) {
		t.Errorf("backend received Since %v", x.queries[0].Since)
	}
}

func TestFailingAndSlowBackendsDoNotStopOthers(t *testing.T) {
	good := &stub{name: "good", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://good.example/"}}}
	failing := &stub{name: "failing", kinds: []Kind{KindWeb}, err: &StatusError{StatusCode: 500}}
	slow := &stub{name: "slow", kinds: []Kind{KindWeb}, block: true}
	panicky := &stub{name: "panicky", kinds: []Kind{KindWeb}, panic: true}
	m := NewMulti([]Backend{slow, failing, good, panicky}, Options{Timeout: 150 * time.Millisecond})

	start := time.Now()
	out := m.Search(bg, Query{Text: "q"})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("search took %s despite a 150ms timeout", d)
	}
	if len(out.Results) != 1 || out.Results[0].URL != "https://good.example/" {
		t.Errorf("results = %+v", out.Results)
	}
	if len(out.Errors) != 3 {
		t.Fatalf("errors = %v", out.Errors)
	}
	// Errors come in backend order.
	if out.Errors[0].Backend != "slow" || !errors.Is(&out.Errors[0], context.DeadlineExceeded) {
		t.Errorf("slow backend error = %v", &out.Errors[0])
	}
	var se *StatusError
	if out.Errors[1].Backend != "failing" || !errors.As(&out.Errors[1], &se) || se.StatusCode != 500 {
		t.Errorf("failing backend error = %v", &out.Errors[1])
	}
	if out.Errors[2].Backend != "panicky" {
		t.Errorf("panicking backend error = %v", &out.Errors[2])
	}
}

func TestAllBackendsFail(t *testing.T) {
	a := &stub{name: "a", kinds: []Kind{KindWeb}, err: errors.New("down")}
	b := &stub{name: "b", kinds: []Kind{KindWeb}, err: &BackendError{Backend: "b", Err: errors.New("429"), RateLimited: true, RetryAfter: time.Minute}}
	out := NewMulti([]Backend{a, b}, Options{}).Search(bg, Query{Text: "q"})
	if len(out.Results) != 0 || len(out.Errors) != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	if !out.Errors[1].RateLimited || out.Errors[1].RetryAfter != time.Minute || out.Errors[1].Backend != "b" {
		t.Errorf("rate-limit details lost: %+v", out.Errors[1])
	}
	if out := NewMulti(nil, Options{}).Search(bg, Query{Text: "q"}); len(out.Results) != 0 || len(out.Errors) != 0 {
		t.Errorf("no backends: %+v", out)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	slow := &stub{name: "slow", kinds: []Kind{KindWeb}, block: true}
	if out := NewMulti([]Backend{slow}, Options{}).Search(ctx, Query{Text: "q"}); len(out.Errors) != 1 || !errors.Is(&out.Errors[0], context.Canceled) {
		t.Errorf("cancelled search: %+v", out)
	}
}

func TestConcurrencyBound(t *testing.T) {
	var inflight, maxSeen atomic.Int32
	var bs []Backend
	for i := range 6 {
		bs = append(bs, &stub{name: fmt.Sprint("b", i), kinds: []Kind{KindWeb}, inflight: &inflight, maxSeen: &maxSeen,
			results: []Result{{URL: fmt.Sprintf("https://b%d.example/", i)}}})
	}
	out := NewMulti(bs, Options{Concurrency: 2}).Search(bg, Query{Text: "q"})
	if len(out.Results) != 6 {
		t.Errorf("%d results, want 6", len(out.Results))
	}
	if got := maxSeen.Load(); got > 2 || got < 1 {
		t.Errorf("max concurrent backend calls = %d, want ≤ 2", got)
	}
}

func TestCooldownAfterRetryAfter(t *testing.T) {
	clock := quartz.NewMock(t)
	clock.Set(testNow)
	b := &stub{name: "b", kinds: []Kind{KindWeb}, err: &BackendError{Backend: "b", Err: &StatusError{StatusCode: 429}, RateLimited: true, RetryAfter: time.Minute}}
	m := NewMulti([]Backend{b}, Options{Clock: clock})
	m.Search(bg, Query{Text: "q"})
	out := m.Search(bg, Query{Text: "q"})
	if b.calls.Load() != 1 {
		t.Errorf("backend called %d times during its Retry-After", b.calls.Load())
	}
	if len(out.Errors) != 1 || !out.Errors[0].RateLimited || out.Errors[0].RetryAfter != time.Minute {
		t.Errorf("cooldown error = %+v", out.Errors)
	}
	clock.Advance(61 * time.Second)
	m.Search(bg, Query{Text: "q"})
	if b.calls.Load() != 2 {
		t.Errorf("backend not called again after Retry-After (calls %d)", b.calls.Load())
	}
}

// scriptedLimiter answers Allow from a list, then allows; AllowN of
// several calls is refused for a minute when refuseTogether, and allowed
// otherwise (neither counted in asked).
type scriptedLimiter struct {
	mu             sync.Mutex
	answers        []time.Duration
	err            error
	asked          []string
	refuseTogether bool
}

func (l *scriptedLimiter) AllowN(ctx context.Context, backend string, n int) (time.Duration, error) {
	if n == 1 {
		return l.Allow(ctx, backend)
	}
	if l.refuseTogether {
		return time.Minute, nil
	}
	return 0, nil
}

func (l *scriptedLimiter) Allow(_ context.Context, backend string) (time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, backend)
	if l.err != nil {
		return 0, l.err
	}
	if len(l.answers) == 0 {
		return 0, nil
	}
	a := l.answers[0]
	l.answers = l.answers[1:]
	return a, nil
}

func TestLimiterRefusalAndFailure(t *testing.T) {
	b := &stub{name: "b", kinds: []Kind{KindWeb}, results: []Result{{URL: "https://b.example/"}}}

	l := &scriptedLimiter{answers: []time.Duration{5 * time.Second}}
	out := NewMulti([]Backend{b}, Options{Limiter: l}).Search(bg, Query{Text: "q"})
	if b.calls.Load() != 0 || len(out.Errors) != 1 || !out.Errors[0].RateLimited || out.Errors[0].RetryAfter != 5*time.Second {
		t.Errorf("refused call: calls %d outcome %+v", b.calls.Load(), out)
	}
	if errors.Is(&out.Errors[0], ErrLimiterFailed) {
		t.Errorf("a refusal is reported as the limiter failing: %v", &out.Errors[0])
	}
	if !slices.Equal(l.asked, []string{"b"}) {
		t.Errorf("limiter asked for %v", l.asked)
	}

	l = &scriptedLimiter{err: errors.New("connection refused")}
	out = NewMulti([]Backend{b}, Options{Limiter: l}).Search(bg, Query{Text: "q"})
	if b.calls.Load() != 0 || len(out.Errors) != 1 || out.Errors[0].RateLimited {
		t.Errorf("limiter failure: calls %d outcome %+v", b.calls.Load(), out)
	}
	if !errors.Is(&out.Errors[0], ErrLimiterFailed) || !strings.Contains(out.Errors[0].Error(), "connection refused") {
		t.Errorf("limiter failure %v: not ErrLimiterFailed with its cause", &out.Errors[0])
	}

	// With MaxWait, a short wait is taken instead of failing: the call is
	// made once the clock has moved by the limiter's answer, not before.
	l = &scriptedLimiter{answers: []time.Duration{500 * time.Millisecond}}
	clock := quartz.NewMock(t)
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	wait := clock.Trap().NewTimer("search", "limiter")
	defer wait.Close()
	done := make(chan Outcome, 1)
	go func() {
		done <- NewMulti([]Backend{b}, Options{Limiter: l, MaxWait: time.Second, Clock: clock}).Search(bg, Query{Text: "q"})
	}()
	call := wait.MustWait(ctx)
	if call.Duration != 500*time.Millisecond {
		t.Errorf("waited %s, want the limiter's 500ms", call.Duration)
	}
	call.MustRelease(ctx)
	if n := b.calls.Load(); n != 0 {
		t.Fatalf("%d calls before the wait was over", n)
	}
	clock.Advance(500 * time.Millisecond).MustWait(ctx)
	out = <-done
	if b.calls.Load() != 1 || len(out.Results) != 1 || len(l.asked) != 2 {
		t.Errorf("waited call: calls %d asked %v outcome %+v", b.calls.Load(), l.asked, out)
	}
}

func TestHeuristicScore(t *testing.T) {
	long := string(make([]rune, 101))
	tests := []struct {
		name string
		r    Result
		want float64
	}{
		{"empty", Result{}, 0},
		{"long snippet", Result{Snippet: long}, 0.3},
		{"100-char snippet is not substantial", Result{Snippet: string(make([]rune, 100))}, 0},
		{"50 citations", Result{Citations: 50}, 0.05},
		{"citations capped", Result{Citations: 100000}, 0.3},
		{"recent", Result{Published: testNow.AddDate(-1, 0, 0)}, 0.2},
		{"old", Result{Published: testNow.AddDate(-4, 0, 0)}, 0},
		{"everything", Result{Snippet: long, Citations: 5000, Published: testNow.AddDate(0, -2, 0)}, 0.8},
	}
	for _, tt := range tests {
		if got := HeuristicScore(tt.r, testNow); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("%s: score %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackendsFromConfig(t *testing.T) {
	got := names(BackendsFromConfig(Config{}))
	if !slices.Equal(got, []string{"arxiv", "wikipedia", "openalex"}) {
		t.Errorf("default backends = %v", got)
	}
	all := Config{SearXNGURL: "http://s", BraveAPIKey: "b", TavilyAPIKey: "t", ArxivURL: "http://a", WikipediaURL: "http://w",
		OpenAlexURL: "http://o", CrossrefURL: "http://c", Contact: "ops@example.com"}
	got = names(BackendsFromConfig(all))
	if !slices.Equal(got, []string{"searxng", "brave", "tavily", "arxiv", "wikipedia", "openalex", "crossref"}) {
		t.Errorf("configured backends = %v", got)
	}
	got = names(BackendsFromConfig(Config{SearXNGURL: "http://s"}))
	if !slices.Equal(got, []string{"searxng"}) {
		t.Errorf("SearXNG only = %v", got)
	}
	// Brave without a key is off even with a URL.
	got = names(BackendsFromConfig(Config{BraveURL: "http://b", OpenAlexURL: "http://o"}))
	if !slices.Equal(got, []string{"openalex"}) {
		t.Errorf("Brave URL without key = %v", got)
	}
}

// TestMultiOverHTTP wires every backend from a Config pointing at fake
// services, one of which is rate-limited, and searches web and academic.
func TestMultiOverHTTP(t *testing.T) {
	sx := newFake(t, "/search")
	sx.respond(http.StatusOK, "searxng.json")
	br := newFake(t, "/web/search")
	br.respond(http.StatusOK, "brave_web.json")
	tv := newFake(t, "/search")
	tv.respond(http.StatusTooManyRequests, "tavily_429.json", "Retry-After", "20")
	ax := newFake(t, "/api/query")
	ax.respond(http.StatusOK, "arxiv.atom")
	wp := newFake(t, "/w/api.php")
	wp.respond(http.StatusOK, "wikipedia.json")
	oa := newFake(t, "/works")
	oa.respond(http.StatusOK, "openalex.json")
	cr := newFake(t, "/works")
	cr.respond(http.StatusOK, "crossref.json")

	cfg := Config{
		SearXNGURL: sx.srv.URL, BraveAPIKey: "k", BraveURL: br.srv.URL, TavilyAPIKey: "t", TavilyURL: tv.srv.URL,
		ArxivURL: ax.srv.URL + "/api/query", WikipediaURL: wp.srv.URL, OpenAlexURL: oa.srv.URL, CrossrefURL: cr.srv.URL,
		Contact: "ops@example.com",
	}
	m := NewMulti(BackendsFromConfig(cfg), Options{Timeout: 5 * time.Second})

	out := m.Search(bg, Query{Text: "retrieval augmented generation", Kind: KindAcademic})
	if len(out.Errors) != 0 {
		t.Errorf("academic errors: %v", out.Errors)
	}
	if tv.count() != 0 || br.count() != 0 || wp.count() != 0 {
		t.Error("web-only backends asked an academic query")
	}
	// RAG paper: SearXNG science, arXiv, OpenAlex all return it; one result remains.
	n := 0
	for _, r := range out.Results {
		if r.ArxivID == "2005.11401" {
			n++
			if r.Citations != 4123 {
				t.Errorf("merged citations = %d", r.Citations)
			}
		}
	}
	if n != 1 {
		t.Errorf("RAG paper appears %d times", n)
	}

	out = m.Search(bg, Query{Text: "retrieval augmented generation"})
	if len(out.Errors) != 1 || out.Errors[0].Backend != "tavily" || !out.Errors[0].RateLimited || out.Errors[0].RetryAfter != 20*time.Second {
		t.Errorf("web errors = %+v", out.Errors)
	}
	if len(out.Results) < 5 {
		t.Errorf("only %d web results", len(out.Results))
	}
	if ua := wp.last().Header.Get("User-Agent"); !contains(ua, "mailto:ops@example.com") {
		t.Errorf("Wikipedia User-Agent %q lacks contact", ua)
	}
}

func TestEmptyQueryAsksNobody(t *testing.T) {
	b := &stub{name: "b", kinds: []Kind{KindWeb}}
	out := NewMulti([]Backend{b}, Options{}).Search(bg, Query{Text: "  "})
	if b.calls.Load() != 0 || len(out.Results)+len(out.Errors) != 0 {
		t.Errorf("empty query: calls %d outcome %+v", b.calls.Load(), out)
	}
}

// TestSlowAndDownHTTPServices checks the timeout and connection failures on
// the real HTTP path.
func TestSlowAndDownHTTPServices(t *testing.T) {
	slow := newFake(t, "/search")
	slow.respond(http.StatusOK, "searxng.json")
	slow.setDelay(5 * time.Second)
	down := newFake(t, "/works")
	down.srv.Close()
	ok := newFake(t, "/w/api.php")
	ok.respond(http.StatusOK, "wikipedia.json")

	m := NewMulti([]Backend{
		NewSearXNG(slow.srv.URL, testSettings()),
		NewOpenAlex(down.srv.URL, "", testSettings()),
		NewWikipedia(ok.srv.URL, testSettings()),
	}, Options{Timeout: 200 * time.Millisecond})
	// OpenAlex is academic only; route everything by asking each kind.
	start := time.Now()
	web := m.Search(bg, Query{Text: "rag"})
	acad := m.Search(bg, Query{Text: "rag", Kind: KindAcademic})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("searches took %s", d)
	}
	if len(web.Errors) != 1 || web.Errors[0].Backend != "searxng" || !errors.Is(&web.Errors[0], context.DeadlineExceeded) {
		t.Errorf("web errors = %+v", web.Errors)
	}
	if len(web.Results) != 3 {
		t.Errorf("web results = %d, want Wikipedia's 3", len(web.Results))
	}
	// SearXNG serves academic too and is still slow; OpenAlex is down.
	if len(acad.Errors) != 2 || acad.Errors[1].Backend != "openalex" || acad.Errors[1].RateLimited {
		t.Errorf("academic errors = %+v", acad.Errors)
	}
	if len(acad.Results) != 0 {
		t.Errorf("academic results = %+v", acad.Results)
	}
}

// Items a backend reads itself (an MCP server's, mcp://server/id) are kept
// and deduplicated as spelt; other schemes are still dropped.
func TestMergeKeepsItemAddresses(t *testing.T) {
	a := &stub{name: "mcp:wiki", kinds: []Kind{KindWeb}, results: []Result{
		{URL: "mcp://wiki/adr-7", Title: "ADR 7"}, {URL: "mcp://wiki/adr-7", Title: "ADR 7 again"},
		{URL: "mcp://wiki/ADR-7", Title: "another id"}, {URL: "ftp://wiki/adr-7", Title: "not readable"},
	}}
	out := NewMulti([]Backend{a}, Options{}).Search(bg, Query{Text: "adr"})
	var got []string
	for _, r := range out.Results {
		got = append(got, r.URL+" "+r.Title)
	}
	if want := []string{"mcp://wiki/adr-7 ADR 7", "mcp://wiki/ADR-7 another id"}; !slices.Equal(got, want) {
		t.Errorf("results %q, want %q", got, want)
	}
}
