package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/fetch"
	"github.com/researchbot/researchbot/pipeline"
)

// TestTheFetchAdapterAppliesTheRunsDomainRulesToRedirects: the rules the
// pipeline puts in the context of a fetch reach the fetcher, which refuses
// a redirect to a never-listed host without contacting it.
func TestTheFetchAdapterAppliesTheRunsDomainRulesToRedirects(t *testing.T) {
	var refusedHits atomic.Int32
	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			refusedHits.Add(1)
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("A page on a never-listed host."))
	}))
	defer refused.Close()
	u, _ := url.Parse(refused.URL)
	target := "http://localhost:" + u.Port() + "/page"
	start := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	}))
	defer start.Close()

	ff := fetch.New(fetch.Config{AllowPrivate: true, Timeout: 5 * time.Second}, nil)
	defer ff.Close()
	f := &fetcher{f: ff, clock: quartz.NewReal(), calls: ignoreCalls{}}
	rules := pipeline.DomainRules{Never: []string{"localhost"}}
	_, err := f.Fetch(pipeline.WithDomainRules(context.Background(), rules), start.URL+"/moved")
	if !errors.Is(err, &fetch.Error{Reason: fetch.ReasonExcludedHost}) || !strings.Contains(err.Error(), "excluded by the run's domain rules (never localhost)") {
		t.Fatalf("err = %v, want the redirect refused by the run's rules", err)
	}
	if n := refusedHits.Load(); n != 0 {
		t.Errorf("the never-listed host received %d requests", n)
	}
	// Without rules the redirect is followed.
	if d, err := f.Fetch(context.Background(), start.URL+"/moved"); err != nil || !strings.Contains(d.Text, "never-listed host") {
		t.Fatalf("without rules: %q, %v", d.Text, err)
	}
}
