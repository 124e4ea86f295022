package fetch

import (
	"errors"
	"fmt"
)

// Reason classifies why a fetch failed. Callers branch on it with errors.As
// (or errors.Is against an *Error carrying only a Reason).
type Reason string

// The reasons a fetch can fail. Parse errors of the URL itself (no host,
// unparseable syntax, credentials in the URL) are reported as ReasonBadScheme
// with a Detail saying what is wrong.
const (
	// ReasonBlockedAddress: the host is, or resolves to, an address the SSRF
	// guard refuses (loopback, private, link-local, CGNAT, metadata, ...).
	ReasonBlockedAddress Reason = "blocked_address"
	// ReasonBadScheme: the URL (or a redirect target) is not a valid http or https URL.
	ReasonBadScheme Reason = "bad_scheme"
	// ReasonTooManyRedirects: more than Config.MaxRedirects redirects.
	ReasonTooManyRedirects Reason = "too_many_redirects"
	// ReasonTimeout: the fetch did not complete within Config.Timeout (or the caller's deadline).
	ReasonTimeout Reason = "timeout"
	// ReasonTooLarge: the body, after decompression, exceeds Config.MaxBytes.
	ReasonTooLarge Reason = "too_large"
	// ReasonContentType: the content type is not allowed, the body is
	// binary despite a text label (or not a PDF despite a PDF label), or the
	// Content-Encoding is unsupported.
	ReasonContentType Reason = "content_type"
	// ReasonRobots: robots.txt disallows the URL for our User-Agent.
	ReasonRobots Reason = "robots"
	// ReasonHTTPStatus: the server answered with a non-2xx status.
	ReasonHTTPStatus Reason = "http_status"
	// ReasonUnreadable: the body is a PDF that cannot be read; Detail says
	// why in words ("encrypted PDF", "no text layer (scanned images?)",
	// "damaged PDF: …").
	ReasonUnreadable Reason = "unreadable"
	// ReasonEmpty: the page has no extractable text.
	ReasonEmpty Reason = "empty"
	// ReasonExcludedHost: the caller's host check (WithHostCheck) refuses
	// the URL's host or a redirect's; Detail gives its reason.
	ReasonExcludedHost Reason = "excluded_host"
	// ReasonNetwork: DNS, connection, TLS or protocol failure, or cancellation.
	ReasonNetwork Reason = "network"
)

// Error is the error Fetch returns for every expected failure.
type Error struct {
	// URL is the URL passed to Fetch.
	URL string
	// Reason classifies the failure.
	Reason Reason
	// Detail is a short human-readable explanation.
	Detail string

	cause error
}

// Error returns "fetch <url>: <reason>: <detail>".
func (e *Error) Error() string {
	u := e.URL
	if len(u) > 200 {
		u = u[:200] + "…"
	}
	if e.Detail == "" {
		return fmt.Sprintf("fetch %s: %s", u, e.Reason)
	}
	return fmt.Sprintf("fetch %s: %s: %s", u, e.Reason, e.Detail)
}

// Unwrap returns the underlying cause, if any (for example context.Canceled).
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same Reason, so
// errors.Is(err, &fetch.Error{Reason: fetch.ReasonTimeout}) works.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) || t == nil {
		return false
	}
	return t.Reason == e.Reason
}

func newError(rawURL string, reason Reason, format string, args ...any) *Error {
	d := fmt.Sprintf(format, args...)
	if len(d) > 300 {
		d = d[:300] + "…"
	}
	return &Error{URL: rawURL, Reason: reason, Detail: d}
}
