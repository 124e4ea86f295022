package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/redisstore"
)

// newTestFetcher returns a Fetcher that may reach loopback test servers.
func newTestFetcher(t *testing.T, cfg Config, cache Cache) *Fetcher {
	t.Helper()
	cfg.AllowPrivate = true
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	f := New(cfg, cache)
	t.Cleanup(f.Close)
	return f
}

// wantReason fails unless err is an *Error with reason r, and returns it.
func wantReason(t *testing.T, err error, r Reason) *Error {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want *Error with reason %s", err, err, r)
	}
	if fe.Reason != r {
		t.Fatalf("reason = %s (%v), want %s", fe.Reason, fe, r)
	}
	if !errors.Is(err, &Error{Reason: r}) {
		t.Fatalf("errors.Is(err, &Error{Reason: %s}) = false", r)
	}
	t.Logf("error: %v", fe)
	return fe
}

// startServer starts an httptest server whose handler stops on client
// disconnect (handlers must watch r.Context()).
func startServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func simplePage(title string) string {
	return "<!DOCTYPE html><html><head><title>" + title + "</title></head><body><article><h1>" + title +
		"</h1><p>" + strings.Repeat("This paragraph is the main text of the test page and says something useful. ", 8) +
		"</p></article></body></html>"
}

func serveHTML(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

// totalAlloc runs fn and reports how many bytes the process allocated meanwhile.
func totalAlloc(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// writeN writes n bytes of filler from a small reused buffer, stopping when
// the client goes away.
func writeN(w http.ResponseWriter, r *http.Request, n int64) {
	chunk := bytes.Repeat([]byte("<p>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa</p>\n"), 1000)
	for n > 0 && r.Context().Err() == nil {
		c := chunk
		if int64(len(c)) > n {
			c = c[:n]
		}
		if _, err := w.Write(c); err != nil {
			return
		}
		n -= int64(len(c))
	}
}

func TestFetchArticle(t *testing.T) {
	article, err := os.ReadFile("../extract/testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	var gotUA atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/story", func(w http.ResponseWriter, r *http.Request) {
		gotUA.Store(r.Header.Get("User-Agent"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(article)
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/story", http.StatusMovedPermanently)
	})
	srv := startServer(t, mux)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := quartz.NewMock(t)
	clock.Set(now)
	f := newTestFetcher(t, Config{Clock: clock}, nil)

	p, err := f.Fetch(context.Background(), srv.URL+"/old#frag")
	if err != nil {
		t.Fatal(err)
	}
	if p.URL != srv.URL+"/old#frag" || p.FinalURL != srv.URL+"/story" {
		t.Errorf("URL = %q, FinalURL = %q", p.URL, p.FinalURL)
	}
	if p.Title != "City Council Approves Riverside Solar Farm" || p.Author != "Maria Okonkwo" {
		t.Errorf("Title = %q, Author = %q", p.Title, p.Author)
	}
	if p.Published.Format("2006-01-02") != "2024-03-05" {
		t.Errorf("Published = %v", p.Published)
	}
	if p.CanonicalURL != "https://www.harborgazette.example/news/2024/03/05/council-approves-riverside-solar-farm" {
		t.Errorf("CanonicalURL = %q", p.CanonicalURL)
	}
	if !strings.Contains(p.Text, "voted 7-2 on Tuesday") || strings.Contains(p.Text, "Subscribe today") {
		t.Errorf("Text = %q", p.Text)
	}
	if p.StatusCode != 200 || p.ContentType != "text/html" || !p.FetchedAt.Equal(now) || p.Truncated {
		t.Errorf("StatusCode=%d ContentType=%q FetchedAt=%v Truncated=%v", p.StatusCode, p.ContentType, p.FetchedAt, p.Truncated)
	}
	if ua, _ := gotUA.Load().(string); !strings.HasPrefix(ua, "researchbot/") || !strings.Contains(ua, "https://") {
		t.Errorf("User-Agent = %q, want researchbot with a contact URL", ua)
	}
}

func TestFetchGzipPage(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(simplePage("Compressed Page")))
	zw.Close()
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			http.Error(w, "no gzip", 400)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(buf.Bytes())
	}))
	p, err := newTestFetcher(t, Config{}, nil).Fetch(context.Background(), srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Compressed Page" || !strings.Contains(p.Text, "main text of the test page") {
		t.Errorf("Title = %q Text = %q", p.Title, p.Text)
	}
}

func TestFetchTooLarge(t *testing.T) {
	const size = 10 << 20
	mux := http.NewServeMux()
	mux.HandleFunc("/with-length", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		writeN(w, r, size)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.(http.Flusher).Flush() // no Content-Length: chunked
		writeN(w, r, size)
	})
	srv := startServer(t, mux)
	f := newTestFetcher(t, Config{MaxBytes: 1 << 20}, nil)
	for _, path := range []string{"/with-length", "/chunked"} {
		t.Run(path, func(t *testing.T) {
			var err error
			alloc := totalAlloc(func() { _, err = f.Fetch(context.Background(), srv.URL+path) })
			wantReason(t, err, ReasonTooLarge)
			t.Logf("allocated %d bytes", alloc)
			if alloc > 5<<20 {
				t.Errorf("allocated %d bytes fetching a 10 MB page with a 1 MiB cap", alloc)
			}
		})
	}
}

func TestFetchGzipBomb(t *testing.T) {
	// 32 MiB of zeros after an HTML prefix, gzip -9: about 32 KiB on the wire.
	bomb, err := os.ReadFile("testdata/bomb.html.gz")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb)
	}))
	f := newTestFetcher(t, Config{MaxBytes: 1 << 20}, nil)
	alloc := totalAlloc(func() { _, err = f.Fetch(context.Background(), srv.URL+"/") })
	wantReason(t, err, ReasonTooLarge)
	t.Logf("allocated %d bytes", alloc)
	if alloc > 5<<20 {
		t.Errorf("allocated %d bytes on a %d-byte gzip bomb with a 1 MiB cap", alloc, len(bomb))
	}
}

func TestFetchEndlessChunkedBody(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		chunk := bytes.Repeat([]byte("<p>more</p>"), 3000)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	f := newTestFetcher(t, Config{MaxBytes: 512 << 10, Timeout: 10 * time.Second}, nil)
	start := time.Now()
	_, err := f.Fetch(context.Background(), srv.URL+"/")
	wantReason(t, err, ReasonTooLarge)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestFetchTrickleTimesOut(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if _, err := w.Write([]byte("a")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	f := newTestFetcher(t, Config{Timeout: 1500 * time.Millisecond}, nil)
	start := time.Now()
	_, err := f.Fetch(context.Background(), srv.URL+"/")
	e := wantReason(t, err, ReasonTimeout)
	if strings.Contains(e.Detail, "robots") {
		t.Errorf("timed out on robots.txt, not on the page: %v", e)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v with a 1.5s timeout", d)
	}
}

func TestFetchSlowHeadersTimesOut(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		<-r.Context().Done()
	}))
	f := newTestFetcher(t, Config{Timeout: 500 * time.Millisecond}, nil)
	start := time.Now()
	_, err := f.Fetch(context.Background(), srv.URL+"/")
	wantReason(t, err, ReasonTimeout)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with a 0.5s timeout", d)
	}
}

func TestFetchCanceledByCaller(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	f := newTestFetcher(t, Config{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := f.Fetch(ctx, srv.URL+"/")
	wantReason(t, err, ReasonNetwork)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) = false for %v", err)
	}
}

func TestFetchBinaryLabelledHTML(t *testing.T) {
	bin := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(bin)
	bin[0] = 0
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(bin)
	}))
	_, err := newTestFetcher(t, Config{}, nil).Fetch(context.Background(), srv.URL+"/")
	e := wantReason(t, err, ReasonContentType)
	if !strings.Contains(e.Detail, "binary") {
		t.Errorf("Detail = %q, want it to say binary", e.Detail)
	}
}

func TestFetchHTTPStatus(t *testing.T) {
	srv := startServer(t, http.NotFoundHandler())
	_, err := newTestFetcher(t, Config{}, nil).Fetch(context.Background(), srv.URL+"/missing")
	e := wantReason(t, err, ReasonHTTPStatus)
	if !strings.Contains(e.Detail, "404") {
		t.Errorf("Detail = %q, want 404", e.Detail)
	}
}

func TestFetchRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	// /chain/N redirects N more times, then serves a page.
	mux.HandleFunc("/chain/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			serveHTML(simplePage("End of chain"))(w, r)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/to-gopher", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "gopher://127.0.0.1:70/", http.StatusFound)
	})
	srv := startServer(t, mux)
	f := newTestFetcher(t, Config{}, nil)
	ctx := context.Background()

	_, err := f.Fetch(ctx, srv.URL+"/loop")
	wantReason(t, err, ReasonTooManyRedirects)

	p, err := f.Fetch(ctx, srv.URL+"/chain/5")
	if err != nil {
		t.Fatalf("5 redirects: %v", err)
	}
	if p.Title != "End of chain" || p.FinalURL != srv.URL+"/chain/0" {
		t.Errorf("Title %q FinalURL %q", p.Title, p.FinalURL)
	}
	_, err = f.Fetch(ctx, srv.URL+"/chain/6")
	wantReason(t, err, ReasonTooManyRedirects)

	_, err = f.Fetch(ctx, srv.URL+"/to-file")
	wantReason(t, err, ReasonBadScheme)
	_, err = f.Fetch(ctx, srv.URL+"/to-gopher")
	wantReason(t, err, ReasonBadScheme)
}

func TestFetchContentTypes(t *testing.T) {
	mux := http.NewServeMux()
	for path, ct := range map[string]string{
		"/json": "application/json",
		"/pdf":  "application/pdf",
		"/png":  "image/png",
		"/zip":  "application/zip",
		"/bad":  "text/html; charset=\"",
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			fmt.Fprint(w, `{"a": 1}`)
		})
	}
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "Plain notes.\nSecond line.")
	})
	mux.HandleFunc("/xhtml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xhtml+xml")
		fmt.Fprint(w, `<?xml version="1.0"?>`+strings.Replace(simplePage("XHTML page"), "<!DOCTYPE html><html>", `<html xmlns="http://www.w3.org/1999/xhtml">`, 1))
	})
	mux.HandleFunc("/brotli", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "br")
		fmt.Fprint(w, "\x1b\x00")
	})
	srv := startServer(t, mux)
	f := newTestFetcher(t, Config{}, nil)
	ctx := context.Background()
	for _, path := range []string{"/json", "/pdf", "/png", "/zip", "/bad", "/brotli"} {
		t.Run(path, func(t *testing.T) {
			_, err := f.Fetch(ctx, srv.URL+path)
			e := wantReason(t, err, ReasonContentType)
			if path == "/pdf" && !strings.Contains(e.Detail, "PDF") {
				t.Errorf("Detail = %q, want it to mention PDF", e.Detail)
			}
		})
	}
	p, err := f.Fetch(ctx, srv.URL+"/plain")
	if err != nil || p.Text != "Plain notes.\nSecond line." || p.ContentType != "text/plain" {
		t.Errorf("plain: %+v, %v", p, err)
	}
	p, err = f.Fetch(ctx, srv.URL+"/xhtml")
	if err != nil || p.Title != "XHTML page" || p.ContentType != "application/xhtml+xml" {
		t.Errorf("xhtml: %+v, %v", p, err)
	}
}

func TestFetchRobots(t *testing.T) {
	var robotsHits, pageHits atomic.Int32
	other := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
			return
		}
		pageHits.Add(1)
		serveHTML(simplePage("Other"))(w, r)
	}))
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		robotsHits.Add(1)
		fmt.Fprint(w, "User-agent: otherbot\nDisallow: /\n\nUser-agent: researchbot\nDisallow: /private/\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		pageHits.Add(1)
		serveHTML(simplePage("Public"))(w, r)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/page", http.StatusFound)
	})
	srv := startServer(t, mux)
	f := newTestFetcher(t, Config{}, nil)
	ctx := context.Background()

	_, err := f.Fetch(ctx, srv.URL+"/private/report")
	wantReason(t, err, ReasonRobots)
	if pageHits.Load() != 0 {
		t.Errorf("disallowed page was requested %d times", pageHits.Load())
	}
	if _, err := f.Fetch(ctx, srv.URL+"/public"); err != nil {
		t.Fatalf("allowed page: %v", err)
	}
	if n := robotsHits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (cached)", n)
	}
	// A redirect to a host whose robots.txt disallows us is refused too.
	_, err = f.Fetch(ctx, srv.URL+"/elsewhere")
	wantReason(t, err, ReasonRobots)
	if n := pageHits.Load(); n != 1 { // /public only, never other's /page
		t.Errorf("page hits = %d, want 1", n)
	}
}

func TestFetchRobotsServerErrorDisallows(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Error(w, "oops", http.StatusServiceUnavailable)
			return
		}
		serveHTML(simplePage("x"))(w, r)
	}))
	_, err := newTestFetcher(t, Config{}, nil).Fetch(context.Background(), srv.URL+"/")
	wantReason(t, err, ReasonRobots)
}

func TestFetchPerHostConcurrency(t *testing.T) {
	var inflight, maxInflight atomic.Int32
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := maxInflight.Load()
			if n <= m || maxInflight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(150 * time.Millisecond)
		serveHTML(simplePage("Slow page"))(w, r)
	}))
	f := newTestFetcher(t, Config{PerHostConcurrency: 2}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := f.Fetch(context.Background(), fmt.Sprintf("%s/p/%d", srv.URL, i))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if m := maxInflight.Load(); m != 2 {
		t.Errorf("max concurrent requests at the server = %d, want 2", m)
	}
	if n := len(f.hosts.hosts); n != 0 {
		t.Errorf("host limiter still tracks %d hosts", n)
	}
}

func TestFetchCacheRedis(t *testing.T) {
	_, rdb := redistest.Start(t)
	var hits, robotsHits atomic.Int32
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsHits.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		hits.Add(1)
		serveHTML(simplePage("Cached page"))(w, r)
	}))
	const ttl = 700 * time.Millisecond
	cache := redisstore.NewPageCache(rdb)
	f := newTestFetcher(t, Config{CacheTTL: ttl}, cache)
	ctx := context.Background()

	p1, err := f.Fetch(ctx, srv.URL+"/a")
	if err != nil {
		t.Fatal(err)
	}
	p2, err := f.Fetch(ctx, srv.URL+"/a#other-fragment")
	if err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("server hit %d times, want 1 (second fetch from cache)", n)
	}
	if p2.Title != p1.Title || p2.Text != p1.Text || !p2.FetchedAt.Equal(p1.FetchedAt) || p2.FinalURL != p1.FinalURL {
		t.Errorf("cached page differs:\n%+v\n%+v", p1, p2)
	}
	keys, err := rdb.Keys(ctx, "rb:fetch:page:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("page keys = %v, %v", keys, err)
	}
	if d := rdb.PTTL(ctx, keys[0]).Val(); d <= 0 || d > ttl {
		t.Errorf("PTTL = %v, want in (0, %v]", d, ttl)
	}
	// Another Fetcher (another replica) shares the cache: the page and
	// robots.txt come from Redis, and robots rules still apply.
	f2 := newTestFetcher(t, Config{CacheTTL: ttl}, cache)
	if _, err := f2.Fetch(ctx, srv.URL+"/a"); err != nil {
		t.Fatal(err)
	}
	_, err = f2.Fetch(ctx, srv.URL+"/private")
	wantReason(t, err, ReasonRobots)
	if h, r := hits.Load(), robotsHits.Load(); h != 1 || r != 1 {
		t.Errorf("second replica: page hits %d, robots hits %d; want 1 and 1", h, r)
	}

	// After the TTL the page is fetched again: once per TTL. Redis expires
	// the key (its PTTL was checked above) on its own clock, which a test
	// cannot move: the expiry is made now instead of waited for.
	if err := rdb.Del(ctx, keys[0]).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Fetch(ctx, srv.URL+"/a"); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server hit %d times after TTL, want 2", n)
	}
}

func TestFetchBadURLs(t *testing.T) {
	f := newTestFetcher(t, Config{}, nil)
	for _, u := range []string{
		"file:///etc/passwd", "ftp://example.com/x", "gopher://example.com/", "javascript:alert(1)",
		"data:text/html,<p>x</p>", "http://", "http:///path", "//example.com/x", "example.com/x",
		"http://user:pass@example.com/", "http://%zz/", "http://[::1/", "http://1.2.3.4.5/", "http://0x100000000/",
		"http://example.0x/",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), u)
			wantReason(t, err, ReasonBadScheme)
		})
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  string
		isNum bool
		bad   bool
	}{
		{"2130706433", "127.0.0.1", true, false},
		{"0x7f.1", "127.0.0.1", true, false},
		{"017700000001", "127.0.0.1", true, false},
		{"127.1", "127.0.0.1", true, false},
		{"0177.0.0.1", "127.0.0.1", true, false},
		{"0x7f.0x0.0x0.0x1", "127.0.0.1", true, false},
		{"10.0.0.5.", "10.0.0.5", true, false},
		{"169.254.43518", "169.254.169.254", true, false},
		{"example.com", "", false, false},
		{"1.example", "", false, false},
		{"09.1", "", true, true},
		{"256.1.1.1", "", true, true},
		{"4294967296", "", true, true},
	} {
		ip, isNum, err := parseLegacyIPv4(c.in)
		if isNum != c.isNum || (err != nil) != c.bad || (!c.bad && c.isNum && ip.String() != c.want) {
			t.Errorf("parseLegacyIPv4(%q) = %v, %v, %v; want %s, %v, bad=%v", c.in, ip, isNum, err, c.want, c.isNum, c.bad)
		}
	}
}

// TestFetchPagesOfOneHostTogether fetches five pages of one host at once:
// they share one robots.txt download and are read in parallel, not two at
// a time.
func TestFetchPagesOfOneHostTogether(t *testing.T) {
	var robotsHits, inFlight, most atomic.Int32
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		robotsHits.Add(1)
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n == 5 {
			close(release) // every page is being served at once
		}
		<-release
		serveHTML(simplePage("Page"))(w, r)
	})
	srv := startServer(t, mux)
	f := newTestFetcher(t, Config{}, nil)
	errs := make(chan error, 5)
	for i := range 5 {
		go func() {
			_, err := f.Fetch(t.Context(), fmt.Sprintf("%s/page/%d", srv.URL, i))
			errs <- err
		}()
	}
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := robotsHits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times for 5 pages fetched together, want 1", n)
	}
	if m := most.Load(); m != 5 {
		t.Errorf("at most %d pages of one host were read at once, want 5", m)
	}
}
