package llm

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/researchbot/researchbot/internal/retryafter"
)

// maxRetryAfter caps how long a provider's Retry-After can make one retry wait.
const maxRetryAfter = 5 * time.Minute

// metaKey is the context key under which complete passes a *respMeta to the
// recordingDoer for one HTTP call.
type metaKey struct{}

// respMeta records what go-openai does not expose on errors: whether the
// request was sent, and the response's retry hints.
type respMeta struct {
	sent         bool
	status       int
	retryAfterHd string // Retry-After: seconds or HTTP date
	retryAfterMs string // retry-after-ms (OpenAI, Azure): milliseconds
}

// retryAfter returns the delay the provider asked for, if any.
func (m *respMeta) retryAfter(now time.Time) (time.Duration, bool) {
	if ms := strings.TrimSpace(m.retryAfterMs); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 {
			return capRetry(time.Duration(v * float64(time.Millisecond))), true
		}
	}
	d, ok := retryafter.Parse(m.retryAfterHd, now)
	if !ok {
		return 0, false
	}
	return capRetry(d), true
}

func capRetry(d time.Duration) time.Duration {
	return min(d, maxRetryAfter)
}

// recordingDoer is the go-openai HTTPDoer: it sends through the configured
// http.Client and records response headers into the respMeta found in the
// request's context.
type recordingDoer struct {
	inner    *http.Client
	azureKey string // set for Azure's v1 API, which wants an api-key header
}

func (d *recordingDoer) Do(req *http.Request) (*http.Response, error) {
	if d.azureKey != "" {
		req.Header.Set("api-key", d.azureKey)
	}
	meta, _ := req.Context().Value(metaKey{}).(*respMeta)
	if meta != nil {
		meta.sent = true
	}
	resp, err := d.inner.Do(req)
	if resp != nil && meta != nil {
		meta.status = resp.StatusCode
		meta.retryAfterHd = resp.Header.Get("Retry-After")
		meta.retryAfterMs = resp.Header.Get("Retry-After-Ms")
	}
	return resp, err
}

// withMeta returns ctx carrying meta, for the recordingDoer to fill in.
func withMeta(ctx context.Context, meta *respMeta) context.Context {
	return context.WithValue(ctx, metaKey{}, meta)
}
