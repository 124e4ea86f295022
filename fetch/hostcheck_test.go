package fetch

import (
	"context"
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

func (c *mapCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[key]
	return v, ok, nil
}

func (c *mapCache) Set(_ context.Context, key string, v []byte, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = v
	return nil
}
