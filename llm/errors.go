package llm

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// ErrContextLength reports that the provider rejected the request because the
// input is longer than the model's context window. It is never retried: the
// caller shrinks its input and tries again.
var ErrContextLength = errors.New("llm: input exceeds the model's context length")

// ErrUnreachable reports that the endpoint could not be reached (no
// connection, or it broke before an answer came). It is retried.
var ErrUnreachable = errors.New("llm: the endpoint could not be reached")

// ErrQuota reports that the account has no quota or credit left
// (insufficient_quota / billing). It is never retried.
var ErrQuota = errors.New("llm: provider quota or billing limit reached")

// RefusalError reports that the model refused to answer (message.refusal was
// set, or the reply was withheld by a content filter). The refusal text is
// untrusted model output.
type RefusalError struct {
	Message string
}

func (e *RefusalError) Error() string {
	return "llm: model refused: " + e.Message
}

// InvalidOutputError reports that the model's reply was still not valid JSON
// matching the schema after one repair attempt. Raw is the last reply
// (untrusted model output); Problems lists what was wrong with it.
type InvalidOutputError struct {
	Raw      string
	Problems []string
}

func (e *InvalidOutputError) Error() string {
	return "llm: model output invalid after repair: " + strings.Join(e.Problems, "; ")
}

// APIError is a failure reported by the provider over HTTP. Message has any API
// key removed. errors.Is(err, ErrContextLength) and errors.Is(err, ErrQuota)
// hold for the matching provider errors.
type APIError struct {
	StatusCode int    // HTTP status, 0 if the failure happened before a response
	Code       string // provider error code, e.g. "rate_limit_exceeded"
	Type       string // provider error type, e.g. "invalid_request_error"
	Message    string // provider message, secrets removed
	kind       error  // ErrContextLength, ErrQuota or nil
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: provider error: HTTP %d", e.StatusCode)
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap lets errors.Is match ErrContextLength and ErrQuota.
func (e *APIError) Unwrap() error { return e.kind }

// keyLike matches strings that look like API keys (OpenAI "sk-…" keys and the
// like) so that they never reach an error message even when partially masked.
var keyLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(sk|key|rk)-[A-Za-z0-9_*\-]{6,}`) })

// redact removes the API key (and anything shaped like one) from s.
func redact(s, apiKey string) string {
	if apiKey != "" {
		s = strings.ReplaceAll(s, apiKey, "[redacted]")
	}
	return keyLike().ReplaceAllString(s, "[redacted]")
}
