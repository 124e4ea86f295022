package search

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/internal/retryafter"
)

// maxBody bounds how much of a service's answer is read.
const maxBody = 8 << 20

// DefaultUserAgent identifies researchbot to the services it calls, as their
// usage policies (Wikimedia, OpenAlex, Crossref, arXiv) ask.
const DefaultUserAgent = "researchbot/1.0 (+https://github.com/researchbot/researchbot)"

// HTTPSettings are the transport settings shared by the HTTP backends.
type HTTPSettings struct {
	// Client sends the requests; nil means a client with a 30 s timeout.
	Client *http.Client
	// UserAgent is sent with every request; empty means DefaultUserAgent.
	UserAgent string
	// Clock is used to turn Query.Since into relative ranges and to read
	// HTTP-date Retry-After values; nil means the real clock.
	Clock quartz.Clock
}

// DefaultTimeout bounds each request of a backend whose HTTPSettings name
// no Client.
const DefaultTimeout = 30 * time.Second

func (s HTTPSettings) withDefaults() HTTPSettings {
	if s.Client == nil {
		s.Client = &http.Client{Timeout: DefaultTimeout}
	}
	s.UserAgent = cmp.Or(s.UserAgent, DefaultUserAgent)
	if s.Clock == nil {
		s.Clock = quartz.NewReal()
	}
	return s
}

// errorMessage extracts a service's explanation from an error body.
type errorMessage func(body []byte) string

// do sends req and returns the body of a 2xx answer. A 429, or a 503 carrying
// Retry-After, becomes a rate-limited *BackendError; any other non-2xx a
// *StatusError with the service's message.
func (s HTTPSettings) do(ctx context.Context, backend string, req *http.Request, accept string, msg errorMessage) ([]byte, error) {
	req = req.WithContext(ctx)
	req.Header.Set("User-Agent", s.UserAgent)
	req.Header.Set("Accept", accept)
	resp, err := s.Client.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("request to %s: %w", req.URL.Host, ctxErr)
		}
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return nil, fmt.Errorf("request to %s timed out: %w", req.URL.Host, context.DeadlineExceeded)
		}
		// Unwrap *url.Error so the query string (the user's text) is not repeated.
		inner := errors.Unwrap(err)
		inner = cmp.Or(inner, err)
		return nil, fmt.Errorf("request to %s failed: %w", req.URL.Host, inner)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("read answer from %s: %w", req.URL.Host, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, nil
	}
	se := &StatusError{StatusCode: resp.StatusCode}
	if msg != nil {
		se.Message = shorten(msg(body), 200)
	}
	retry, hasRetry := retryAfter(resp.Header, s.Clock.Now())
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable && hasRetry {
		return nil, &BackendError{Backend: backend, Err: se, RateLimited: true, RetryAfter: retry}
	}
	return nil, se
}

// retryAfter reads Retry-After (seconds or an HTTP date), falling back to the
// first value of X-RateLimit-Reset (Brave's per-window seconds).
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := retryafter.Parse(h.Get("Retry-After"), now); ok {
		return d, true
	}
	if v := h.Get("X-RateLimit-Reset"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second, true
		}
	}
	return 0, false
}

// decodeJSON unmarshals a service's answer, naming the service on failure.
func decodeJSON(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}

// tagRe matches a tag; built on first use, not at start (see
// TestPackageInitIsLight).
var tagRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })

// cleanText removes HTML/JATS tags and entities and collapses whitespace.
func cleanText(s string) string {
	if s == "" {
		return ""
	}
	s = html.UnescapeString(tagRe().ReplaceAllString(s, ""))
	return strings.Join(strings.Fields(s), " ")
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// endpoint joins a configured base URL and a path.
func endpoint(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

func parseTime(layouts []string, v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func hasKind(kinds []Kind, k Kind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}
