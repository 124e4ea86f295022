package search

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func testSettings() HTTPSettings {
	return HTTPSettings{UserAgent: "researchbot-test/1 (mailto:ops@example.com)", Clock: fixedClock{quartz.NewReal()}}
}

// fixedClock reads testNow; its timers run in real time.
type fixedClock struct{ quartz.Clock }

// Now returns testNow.
func (fixedClock) Now(...string) time.Time { return testNow }

// recorded is one request the fake service received.
type recorded struct {
	Method, Path string
	Query        url.Values
	Header       http.Header
	Body         []byte
}

// fakeService is an httptest server speaking like one search service: it
// answers requests to path with the configured fixture and records them.
type fakeService struct {
	t    *testing.T
	path string
	srv  *httptest.Server

	mu          sync.Mutex
	reqs        []recorded
	status      int
	body        []byte
	contentType string
	header      map[string]string
	delay       time.Duration
}

func newFake(t *testing.T, path string) *fakeService {
	t.Helper()
	f := &fakeService{t: t, path: path, status: http.StatusOK}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
	status, answer, ct, hdr, delay := f.status, f.body, f.contentType, f.header, f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if r.URL.Path != f.path {
		http.NotFound(w, r)
		return
	}
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

// respond sets the next answers: status, a fixture from testdata and headers
// as name/value pairs.
func (f *fakeService) respond(status int, fixture string, headers ...string) {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", fixture))
	if err != nil {
		f.t.Fatal(err)
	}
	ct := "application/json; charset=utf-8"
	switch filepath.Ext(fixture) {
	case ".atom":
		ct = "application/atom+xml; charset=UTF-8"
	case ".html":
		ct = "text/html; charset=utf-8"
	case ".txt":
		ct = "text/plain; charset=utf-8"
	}
	h := map[string]string{}
	for i := 0; i+1 < len(headers); i += 2 {
		h[headers[i]] = headers[i+1]
	}
	f.mu.Lock()
	f.status, f.body, f.contentType, f.header = status, data, ct, h
	f.mu.Unlock()
}

func (f *fakeService) setDelay(d time.Duration) {
	f.mu.Lock()
	f.delay = d
	f.mu.Unlock()
}

func (f *fakeService) last() recorded {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		f.t.Fatal("the fake service received no request")
	}
	return f.reqs[len(f.reqs)-1]
}

func (f *fakeService) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

// wantQuery checks query parameters of a recorded request.
func wantQuery(t *testing.T, r recorded, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := r.Query.Get(k); got != v {
			t.Errorf("request parameter %s = %q, want %q (query %v)", k, got, v, r.Query)
		}
	}
}

// wantRateLimited checks err is a rate-limited BackendError with retry.
func wantRateLimited(t *testing.T, err error, retry time.Duration) {
	t.Helper()
	var be *BackendError
	if !errors.As(err, &be) || !be.RateLimited {
		t.Fatalf("error %v (%T) is not a rate-limited BackendError", err, err)
	}
	if !errors.Is(err, ErrRateLimited) {
		t.Error("errors.Is(err, ErrRateLimited) = false")
	}
	if be.RetryAfter != retry {
		t.Errorf("RetryAfter = %s, want %s", be.RetryAfter, retry)
	}
}

// wantStatus checks err is a StatusError with the code and message.
func wantStatus(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a StatusError", err, err)
	}
	if se.StatusCode != code {
		t.Errorf("StatusCode = %d, want %d", se.StatusCode, code)
	}
	if msg != "" && !contains(se.Message, msg) {
		t.Errorf("Message = %q, want it to contain %q", se.Message, msg)
	}
}

func contains(s, sub string) bool {
	return strings.Contains(s, sub)
}

var bg = context.Background()
