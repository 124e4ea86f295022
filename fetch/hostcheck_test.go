package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// namedServers serves two host names, allowed.test and spam.test, from
// loopback test servers, and counts the requests spam.test receives.
func namedServers(t *testing.T) (allowed, spam string, spamHits *atomic.Int32, f *Fetcher) {
	t.Helper()
	spamHits = new(atomic.Int32)
	spamSrv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		spamHits.Add(1)
		serveHTML(simplePage("Spam page"))(w, r)
	}))
	spamURL, _ := url.Parse(spamSrv.URL)
	spam = "http://spam.test:" + spamURL.Port()
	allowedSrv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/moved":
			http.Redirect(w, r, spam+"/page", http.StatusFound)
		default:
			serveHTML(simplePage("Allowed page"))(w, r)
		}
	}))
	allowedURL, _ := url.Parse(allowedSrv.URL)
	allowed = "http://www.allowed.test:" + allowedURL.Port()
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return allowed, spam, spamHits, newTestFetcher(t, Config{Resolver: resolver}, nil)
}

// neverSpam is a host check refusing spam.test and its subdomains.
func neverSpam(host string) string {
	if host == "spam.test" || strings.HasSuffix(host, ".spam.test") {
		return "excluded by the run's domain rules (never spam.test)"
	}
	return ""
}

func TestFetchHostCheckRefusesRedirect(t *testing.T) {
	allowed, _, spamHits, f := namedServers(t)
	ctx := WithHostCheck(context.Background(), neverSpam)

	p, err := f.Fetch(ctx, allowed+"/page")
	if err != nil || p.Title != "Allowed page" {
		t.Fatalf("allowed page: %+v, %v", p.Title, err)
	}
	_, err = f.Fetch(ctx, allowed+"/moved")
	fe := wantReason(t, err, ReasonExcludedHost)
	if !strings.Contains(fe.Detail, "redirect to http://spam.test:") || !strings.Contains(fe.Detail, "never spam.test") {
		t.Errorf("detail = %q, want the redirect target and the rule", fe.Detail)
	}
	if fe.URL != allowed+"/moved" {
		t.Errorf("URL = %q, want the URL fetched", fe.URL)
	}
	if n := spamHits.Load(); n != 0 {
		t.Errorf("spam.test received %d requests, want 0", n)
	}
	// Without the check the same redirect is followed.
	p, err = f.Fetch(context.Background(), allowed+"/moved")
	if err != nil || p.Title != "Spam page" {
		t.Fatalf("unchecked redirect: %q, %v", p.Title, err)
	}
}

func TestFetchHostCheckRefusesURL(t *testing.T) {
	_, spam, spamHits, f := namedServers(t)
	_, err := f.Fetch(WithHostCheck(context.Background(), neverSpam), spam+"/page")
	fe := wantReason(t, err, ReasonExcludedHost)
	if fe.Detail != "excluded by the run's domain rules (never spam.test)" {
		t.Errorf("detail = %q", fe.Detail)
	}
	if n := spamHits.Load(); n != 0 {
		t.Errorf("spam.test received %d requests, want 0", n)
	}
}

func TestFetchHostCheckRefusesCachedRedirect(t *testing.T) {
	allowed, _, spamHits, _ := namedServers(t)
	cache := newMapCache()
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	f := newTestFetcher(t, Config{Resolver: resolver}, cache)
	// Read once without rules: the page cached under /moved ended at spam.test.
	if _, err := f.Fetch(context.Background(), allowed+"/moved"); err != nil {
		t.Fatal(err)
	}
	_, err := f.Fetch(WithHostCheck(context.Background(), neverSpam), allowed+"/moved")
	fe := wantReason(t, err, ReasonExcludedHost)
	if !strings.HasPrefix(fe.Detail, "redirect to http://spam.test:") {
		t.Errorf("detail = %q", fe.Detail)
	}
	if n := spamHits.Load(); n != 1 {
		t.Errorf("spam.test received %d requests, want 1 (the unchecked fetch)", n)
	}
}

// mapCache is an in-memory Cache without expiry.
type mapCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMapCache() *mapCache { return &mapCache{m: map[string][]byte{}} }

func (c *mapCache) Get(_ context.Context, keys ...string) ([][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = c.m[k]
	}
	return out, nil
}

func (c *mapCache) Set(_ context.Context, key string, v []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = v
	return nil
}

// countingCache is a mapCache that records the keys of each read.
type countingCache struct {
	*mapCache
	reads [][]string
}

func (c *countingCache) Get(ctx context.Context, keys ...string) ([][]byte, error) {
	c.mu.Lock()
	c.reads = append(c.reads, append([]string(nil), keys...))
	c.mu.Unlock()
	return c.mapCache.Get(ctx, keys...)
}

func (c *countingCache) takeReads() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reads
	c.reads = nil
	return r
}

// A page's cache entry and its origin's robots.txt entry are read in one
// call (one MGET) when the robots.txt is not in memory, and in one call of
// one key when it is; a robots.txt read that way still forbids what it
// forbids, without the forbidden page or robots.txt being requested again.
func TestAPageAndItsRobotsAreReadFromTheCacheTogether(t *testing.T) {
	var pageHits, robotsHits, privateHits atomic.Int32
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robotsHits.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		case "/private":
			privateHits.Add(1)
		}
		pageHits.Add(1)
		serveHTML(simplePage("A page"))(w, r)
	}))
	cache := &countingCache{mapCache: newMapCache()}
	ctx := context.Background()

	f1 := newTestFetcher(t, Config{}, cache)
	if _, err := f1.Fetch(ctx, srv.URL+"/a"); err != nil {
		t.Fatal(err)
	}
	if reads := cache.takeReads(); len(reads) != 1 || len(reads[0]) != 2 {
		t.Fatalf("first page of an origin: cache reads %v, want one read of the page's and the robots.txt's keys", reads)
	}
	if _, err := f1.Fetch(ctx, srv.URL+"/b"); err != nil {
		t.Fatal(err)
	}
	if reads := cache.takeReads(); len(reads) != 1 || len(reads[0]) != 1 {
		t.Fatalf("robots.txt in memory: cache reads %v, want one read of the page's key", reads)
	}

	// Another replica: the robots.txt comes from the read made with the page's.
	f2 := newTestFetcher(t, Config{}, cache)
	_, err := f2.Fetch(ctx, srv.URL+"/private")
	wantReason(t, err, ReasonRobots)
	if reads := cache.takeReads(); len(reads) != 1 || len(reads[0]) != 2 {
		t.Fatalf("another replica: cache reads %v, want one read of two keys", reads)
	}
	if r, p := robotsHits.Load(), privateHits.Load(); r != 1 || p != 0 {
		t.Errorf("robots.txt downloaded %d times (want 1), forbidden page requested %d times (want 0)", r, p)
	}
	if n := pageHits.Load(); n != 2 {
		t.Errorf("pages downloaded %d times, want 2", n)
	}
}
