package search

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSearXNG(t *testing.T) {
	f := newFake(t, "/search")
	b := NewSearXNG(f.srv.URL+"/", testSettings())
	f.respond(http.StatusOK, "searxng.json")

	res, err := b.Search(bg, Query{Text: "retrieval augmented generation", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := f.last()
	wantQuery(t, r, map[string]string{"q": "retrieval augmented generation", "format": "json", "categories": "general", "time_range": ""})
	if ua := r.Header.Get("User-Agent"); ua != testSettings().UserAgent {
		t.Errorf("User-Agent = %q", ua)
	}
	if len(res) != 2 {
		t.Fatalf("got %d results, want Limit 2", len(res))
	}
	if res[0].URL != "https://example.org/blog/rag-explained?utm_source=newsletter" || res[0].Title != "Retrieval-Augmented Generation, explained" {
		t.Errorf("first result = %+v", res[0])
	}
	if !strings.Contains(res[0].Snippet, "model's answer") {
		t.Errorf("snippet entities not decoded: %q", res[0].Snippet)
	}
	if want := time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC); !res[0].Published.Equal(want) {
		t.Errorf("Published = %v, want %v", res[0].Published, want)
	}
	if !res[1].Published.IsZero() {
		t.Errorf("null publishedDate gave %v", res[1].Published)
	}
}

func TestSearXNGKindsAndSince(t *testing.T) {
	f := newFake(t, "/search")
	f.respond(http.StatusOK, "searxng.json")
	b := NewSearXNG(f.srv.URL, testSettings())
	tests := []struct {
		kind      Kind
		since     time.Time
		category  string
		timeRange string
	}{
		{KindNews, testNow.Add(-6 * time.Hour), "news", "day"},
		{KindAcademic, testNow.AddDate(0, 0, -20), "science", "month"},
		{KindWeb, testNow.AddDate(0, -6, 0), "general", "year"},
		{KindWeb, testNow.AddDate(-2, 0, 0), "general", ""},
	}
	for _, tt := range tests {
		if _, err := b.Search(bg, Query{Text: "x", Kind: tt.kind, Since: tt.since}); err != nil {
			t.Fatal(err)
		}
		wantQuery(t, f.last(), map[string]string{"categories": tt.category, "time_range": tt.timeRange})
	}
}

func TestSearXNGErrors(t *testing.T) {
	f := newFake(t, "/search")
	b := NewSearXNG(f.srv.URL, testSettings())

	f.respond(http.StatusForbidden, "searxng_403.html")
	_, err := b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusForbidden, "permission")

	f.respond(http.StatusTooManyRequests, "searxng_429.txt", "Retry-After", "30")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 30*time.Second)

	// Retry-After as an HTTP date.
	f.respond(http.StatusTooManyRequests, "searxng_429.txt", "Retry-After", testNow.Add(90*time.Second).Format(http.TimeFormat))
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 90*time.Second)

	f.respond(http.StatusOK, "searxng_403.html") // HTML where JSON was expected
	if _, err = b.Search(bg, Query{Text: "x"}); err == nil || !strings.Contains(err.Error(), "decode") {
		t.Errorf("non-JSON answer: err = %v", err)
	}
}

func TestBrave(t *testing.T) {
	f := newFake(t, "/res/v1/web/search")
	b := NewBrave(f.srv.URL+"/res/v1", "brave-secret-key", testSettings())
	f.respond(http.StatusOK, "brave_web.json")

	res, err := b.Search(bg, Query{Text: "retrieval augmented generation", Since: time.Date(2026, 11, 1, 15, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	r := f.last()
	if got := r.Header.Get("X-Subscription-Token"); got != "brave-secret-key" {
		t.Errorf("X-Subscription-Token = %q", got)
	}
	wantQuery(t, r, map[string]string{"q": "retrieval augmented generation", "count": "10", "freshness": "2026-11-01to2026-11-22"})
	if len(res) != 2 || res[0].URL != "https://www.example.com/what-is-rag" {
		t.Fatalf("results = %+v", res)
	}
	if res[0].Title != "What is Retrieval-Augmented Generation (RAG)?" || strings.Contains(res[0].Snippet, "<strong>") {
		t.Errorf("markup not removed: %+v", res[0])
	}
	if !res[0].Published.Equal(time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Published = %v", res[0].Published)
	}

	fn := newFake(t, "/news/search")
	bn := NewBrave(fn.srv.URL, "k", testSettings())
	fn.respond(http.StatusOK, "brave_news.json")
	res, err = bn.Search(bg, Query{Text: "rag", Kind: KindNews, Limit: 80})
	if err != nil {
		t.Fatal(err)
	}
	wantQuery(t, fn.last(), map[string]string{"count": "50", "freshness": ""})
	if len(res) != 1 || res[0].URL != "https://news.example.net/2026/11/20/rag-pipelines" {
		t.Errorf("news results = %+v", res)
	}
}

func TestBraveErrors(t *testing.T) {
	f := newFake(t, "/web/search")
	b := NewBrave(f.srv.URL, "brave-secret-key", testSettings())

	f.respond(http.StatusTooManyRequests, "brave_429.json", "X-RateLimit-Limit", "1, 2000", "X-RateLimit-Remaining", "0, 1983", "X-RateLimit-Reset", "1, 1419704")
	_, err := b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, time.Second)
	wantStatus(t, err, http.StatusTooManyRequests, "RATE_LIMITED: Request rate limit exceeded")

	f.respond(http.StatusUnprocessableEntity, "brave_422.json")
	_, err = b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusUnprocessableEntity, "SUBSCRIPTION_TOKEN_INVALID")
	if strings.Contains(err.Error(), "brave-secret-key") {
		t.Error("error message contains the API key")
	}

	if _, err := NewBrave(f.srv.URL, "", testSettings()).Search(bg, Query{Text: "x"}); err == nil {
		t.Error("Brave without key: no error")
	}
}

func TestTavily(t *testing.T) {
	f := newFake(t, "/search")
	b := NewTavily(f.srv.URL, "tvly-secret", testSettings())
	f.respond(http.StatusOK, "tavily.json")

	res, err := b.Search(bg, Query{Text: "retrieval augmented generation", Kind: KindNews, Since: time.Date(2026, 11, 14, 23, 0, 0, 0, time.UTC), Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	r := f.last()
	if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer tvly-secret" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("request %s with headers %v", r.Method, r.Header)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"query": "retrieval augmented generation", "topic": "news", "max_results": 5.0, "start_date": "2026-11-14", "search_depth": "basic"}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body[%s] = %v, want %v", k, body[k], v)
		}
	}
	if len(res) != 2 || res[0].URL != "https://blog.example.io/rag-in-production" {
		t.Fatalf("results = %+v", res)
	}
	if !res[1].Published.Equal(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("published_date parsed as %v", res[1].Published)
	}

	if _, err := b.Search(bg, Query{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	body = nil
	if err := json.Unmarshal(f.last().Body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["start_date"]; ok || body["topic"] != "general" {
		t.Errorf("web query without Since sent %v", body)
	}
}

func TestTavilyErrors(t *testing.T) {
	f := newFake(t, "/search")
	b := NewTavily(f.srv.URL, "tvly-secret", testSettings())
	f.respond(http.StatusUnauthorized, "tavily_401.json")
	_, err := b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusUnauthorized, "missing or invalid API key")
	if strings.Contains(err.Error(), "tvly-secret") {
		t.Error("error contains the key")
	}
	f.respond(http.StatusTooManyRequests, "tavily_429.json", "Retry-After", "60")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, time.Minute)
}

func TestArxiv(t *testing.T) {
	f := newFake(t, "/api/query")
	b := NewArxiv(f.srv.URL+"/api/query", testSettings())
	f.respond(http.StatusOK, "arxiv.atom")

	res, err := b.Search(bg, Query{Text: "retrieval-augmented generation: survey", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantQuery(t, f.last(), map[string]string{
		"search_query": "all:retrieval-augmented AND all:generation AND all:survey",
		"max_results":  "2", "start": "0", "sortBy": "relevance", "sortOrder": "descending",
	})
	if len(res) != 2 {
		t.Fatalf("got %d results", len(res))
	}
	r := res[0]
	if r.URL != "http://arxiv.org/abs/2005.11401v4" || r.ArxivID != "2005.11401" || r.DOI != "10.48550/arxiv.2005.11401" {
		t.Errorf("ids = %q %q %q", r.URL, r.ArxivID, r.DOI)
	}
	if r.Title != "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks" {
		t.Errorf("title %q not unwrapped", r.Title)
	}
	if !slices.Equal(r.Authors, []string{"Patrick Lewis", "Ethan Perez"}) {
		t.Errorf("authors = %v", r.Authors)
	}
	if !r.Published.Equal(time.Date(2020, 5, 22, 17, 26, 0, 0, time.UTC)) || !strings.HasPrefix(r.Snippet, "Large pre-trained") {
		t.Errorf("published %v snippet %q", r.Published, r.Snippet)
	}

	_, err = b.Search(bg, Query{Text: "rag", Since: time.Date(2026, 11, 14, 6, 30, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	wantQuery(t, f.last(), map[string]string{
		"search_query": "(all:rag) AND submittedDate:[202611140630 TO 202611221200]",
		"sortBy":       "submittedDate",
	})

	f.respond(http.StatusOK, "arxiv_empty.atom")
	res, err = b.Search(bg, Query{Text: "zzzqqq"})
	if err != nil || len(res) != 0 {
		t.Errorf("empty feed: %v, %v", res, err)
	}
	n := f.count()
	if res, err := b.Search(bg, Query{Text: " :() "}); err != nil || res != nil || f.count() != n {
		t.Errorf("query without terms: %v, %v, requests %d→%d", res, err, n, f.count())
	}
}

func TestArxivErrors(t *testing.T) {
	f := newFake(t, "/api/query")
	b := NewArxiv(f.srv.URL+"/api/query", testSettings())
	f.respond(http.StatusBadRequest, "arxiv_error.atom")
	_, err := b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusBadRequest, "max_results must be non-negative")

	f.respond(http.StatusOK, "arxiv_error.atom") // error feed with status 200
	_, err = b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusBadRequest, "max_results must be non-negative")

	f.respond(http.StatusTooManyRequests, "searxng_429.txt", "Retry-After", "3")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 3*time.Second)

	f.respond(http.StatusServiceUnavailable, "searxng_429.txt", "Retry-After", "5")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 5*time.Second)

	f.respond(http.StatusServiceUnavailable, "searxng_429.txt") // no Retry-After: plain failure
	_, err = b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusServiceUnavailable, "")
	if errors.Is(err, ErrRateLimited) {
		t.Error("503 without Retry-After reported as rate limiting")
	}
}

func TestWikipedia(t *testing.T) {
	f := newFake(t, "/w/api.php")
	b := NewWikipedia(f.srv.URL, testSettings())
	f.respond(http.StatusOK, "wikipedia.json")

	res, err := b.Search(bg, Query{Text: "retrieval augmented generation", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantQuery(t, f.last(), map[string]string{
		"action": "query", "list": "search", "srsearch": "retrieval augmented generation",
		"srlimit": "3", "format": "json", "formatversion": "2", "srsort": "",
	})
	if len(res) != 3 {
		t.Fatalf("got %d results", len(res))
	}
	if res[0].URL != f.srv.URL+"/wiki/Retrieval-augmented_generation" {
		t.Errorf("URL = %q", res[0].URL)
	}
	if res[2].URL != f.srv.URL+"/wiki/AC/DC_%28disambiguation%29" {
		t.Errorf("URL = %q", res[2].URL)
	}
	if strings.Contains(res[0].Snippet, "searchmatch") || !strings.Contains(res[0].Snippet, "information & data") {
		t.Errorf("snippet = %q", res[0].Snippet)
	}

	// Since: newest edits first, and pages not edited since are dropped.
	res, err = b.Search(bg, Query{Text: "rag", Since: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	wantQuery(t, f.last(), map[string]string{"srsort": "last_edit_desc"})
	if len(res) != 2 {
		t.Errorf("since filter kept %d results, want 2", len(res))
	}

	// The API endpoint itself may be configured.
	b2 := NewWikipedia(f.srv.URL+"/w/api.php", testSettings())
	res, err = b2.Search(bg, Query{Text: "rag"})
	if err != nil || res[0].URL != f.srv.URL+"/wiki/Retrieval-augmented_generation" {
		t.Errorf("API URL config: %v %v", res, err)
	}
}

func TestWikipediaErrors(t *testing.T) {
	f := newFake(t, "/w/api.php")
	b := NewWikipedia(f.srv.URL, testSettings())
	f.respond(http.StatusOK, "wikipedia_ratelimited.json")
	_, err := b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 5*time.Second)

	f.respond(http.StatusOK, "wikipedia_badvalue.json")
	_, err = b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusOK, "badvalue: Unrecognized value")

	f.respond(http.StatusTooManyRequests, "wikipedia_429.html", "Retry-After", "2")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 2*time.Second)
}

func TestOpenAlex(t *testing.T) {
	f := newFake(t, "/works")
	b := NewOpenAlex(f.srv.URL, "ops@example.com", testSettings())
	f.respond(http.StatusOK, "openalex.json")

	res, err := b.Search(bg, Query{Text: "retrieval augmented generation", Since: time.Date(2026, 5, 2, 18, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	r := f.last()
	wantQuery(t, r, map[string]string{"search": "retrieval augmented generation", "per_page": "10", "mailto": "ops@example.com", "filter": "from_publication_date:2026-05-02"})
	if !strings.Contains(r.Header.Get("User-Agent"), "mailto:") {
		t.Errorf("User-Agent %q has no contact", r.Header.Get("User-Agent"))
	}
	if len(res) != 2 {
		t.Fatalf("got %d results", len(res))
	}
	p := res[0]
	if p.URL != "https://doi.org/10.48550/arxiv.2005.11401" || p.DOI != "10.48550/arxiv.2005.11401" || p.Citations != 4123 {
		t.Errorf("first = %+v", p)
	}
	if p.Snippet != "Large pre-trained language models have been shown to store factual knowledge." {
		t.Errorf("abstract rebuilt as %q", p.Snippet)
	}
	if !slices.Equal(p.Authors, []string{"Patrick Lewis", "Ethan Perez"}) || !p.Published.Equal(time.Date(2020, 5, 22, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("authors %v published %v", p.Authors, p.Published)
	}
	if res[1].URL != "https://journal.example.edu/articles/dense-retrieval-survey" || res[1].DOI != "" {
		t.Errorf("work without DOI = %+v", res[1])
	}

	if _, err := b.Search(bg, Query{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if f.last().Query.Has("filter") {
		t.Error("filter sent without Since")
	}
}

func TestOpenAlexErrors(t *testing.T) {
	f := newFake(t, "/works")
	b := NewOpenAlex(f.srv.URL, "", testSettings())
	f.respond(http.StatusBadRequest, "openalex_400.json")
	_, err := b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusBadRequest, "not a valid date")
	if f.last().Query.Has("mailto") {
		t.Error("empty mailto sent")
	}
	f.respond(http.StatusTooManyRequests, "openalex_429.json", "Retry-After", "1")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, time.Second)
	wantStatus(t, err, http.StatusTooManyRequests, "Rate limit exceeded")
}

func TestCrossref(t *testing.T) {
	f := newFake(t, "/works")
	b := NewCrossref(f.srv.URL, "ops@example.com", testSettings())
	f.respond(http.StatusOK, "crossref.json")

	res, err := b.Search(bg, Query{Text: "rag evaluation", Limit: 5, Since: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	wantQuery(t, f.last(), map[string]string{"query": "rag evaluation", "rows": "5", "mailto": "ops@example.com", "filter": "from-pub-date:2024-01-01"})
	if len(res) != 2 {
		t.Fatalf("got %d results", len(res))
	}
	r := res[0]
	if r.URL != "https://doi.org/10.1145/3626772.3657834" || r.Citations != 57 || !slices.Equal(r.Authors, []string{"Alireza Salemi", "Hamed Zamani"}) {
		t.Errorf("first = %+v", r)
	}
	if strings.Contains(r.Snippet, "jats") || !strings.HasPrefix(r.Snippet, "Evaluating retrieval-augmented") {
		t.Errorf("abstract = %q", r.Snippet)
	}
	if !r.Published.Equal(time.Date(2024, 7, 10, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("published = %v", r.Published)
	}
	if res[1].DOI != "10.1000/org-only" || res[1].Authors[0] != "Example Consortium" || !res[1].Published.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("second = %+v", res[1])
	}
}

func TestCrossrefErrors(t *testing.T) {
	f := newFake(t, "/works")
	b := NewCrossref(f.srv.URL, "", testSettings())
	f.respond(http.StatusBadRequest, "crossref_400.json")
	_, err := b.Search(bg, Query{Text: "x"})
	wantStatus(t, err, http.StatusBadRequest, "no such filter")
	f.respond(http.StatusTooManyRequests, "crossref_429.txt", "Retry-After", "10")
	_, err = b.Search(bg, Query{Text: "x"})
	wantRateLimited(t, err, 10*time.Second)
}

func TestBackendKinds(t *testing.T) {
	hs := testSettings()
	tests := []struct {
		b    Backend
		want []Kind
	}{
		{NewSearXNG("http://s", hs), []Kind{KindWeb, KindNews, KindAcademic}},
		{NewBrave("", "k", hs), []Kind{KindWeb, KindNews}},
		{NewTavily("", "k", hs), []Kind{KindWeb, KindNews}},
		{NewArxiv("", hs), []Kind{KindAcademic}},
		{NewWikipedia("", hs), []Kind{KindWeb}},
		{NewOpenAlex("", "", hs), []Kind{KindAcademic}},
		{NewCrossref("", "", hs), []Kind{KindAcademic}},
	}
	for _, tt := range tests {
		if !slices.Equal(tt.b.Kinds(), tt.want) {
			t.Errorf("%s kinds = %v, want %v", tt.b.Name(), tt.b.Kinds(), tt.want)
		}
	}
}
