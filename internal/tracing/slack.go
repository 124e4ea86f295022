package tracing

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// keySlackMethod is the Slack Web API method a span calls (chat.postMessage).
const keySlackMethod = attribute.Key("researchbot.slack.method")

// SlackHTTPClient returns a copy of c (nil: a client with timeout) whose
// every call to Slack is a span (SlackTransport), or c itself when t is nil.
func (t *Tracing) SlackHTTPClient(c *http.Client, timeout time.Duration) *http.Client {
	if t == nil {
		return c
	}
	return withTransport(c, timeout, t.SlackTransport)
}

// SlackTransport wraps next (nil: http.DefaultTransport) so that every
// request to Slack is a client span named "slack <method>"
// ("slack chat.postMessage"): a child of the span the request's context
// carries (a run's step, a checkpoint shown, a person's decision), or the
// root of a trace of its own when it carries none (Socket Mode's
// apps.connections.open, the App Home). A Web API call records its method
// and path (/api/chat.postMessage); a call to one of the URLs Slack hands
// out — a response_url ("slack response_url"), a file upload URL ("slack
// upload") or a file's download URL ("slack file") — records its host
// only, since those URLs are themselves a permission. Neither the token
// (sent in a header) nor the message (sent in the body) is ever recorded,
// and no trace header is sent to Slack.
func (t *Tracing) SlackTransport(next http.RoundTripper) http.RoundTripper {
	next = cmp.Or(next, http.DefaultTransport)
	if t == nil {
		return next
	}
	return &slackTransport{t: t, next: next}
}

type slackTransport struct {
	t    *Tracing
	next http.RoundTripper
}

// slackMethod names a request to Slack: the Web API method of an /api/
// path (and true), or what kind of handed-out URL it is (and false).
func slackMethod(u *url.URL) (string, bool) {
	p := u.Path
	if i := strings.Index(p, "/api/"); i >= 0 {
		m := p[i+len("/api/"):]
		if m != "" && !strings.Contains(m, "/") {
			return m, true
		}
	}
	switch {
	case u.Hostname() == "hooks.slack.com", strings.HasPrefix(p, "/actions/"), strings.HasPrefix(p, "/commands/"), strings.HasPrefix(p, "/hooks/"):
		return "response_url", false
	case strings.Contains(p, "/upload/"):
		return "upload", false
	case strings.HasPrefix(p, "/files-pri/"), strings.Contains(p, "/download/"):
		return "file", false
	}
	return "call", false
}

func (tr *slackTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method, api := slackMethod(req.URL)
	attrs := []attribute.KeyValue{keyHTTPMethod.String(req.Method), keyServerAddress.String(req.URL.Hostname())}
	if api {
		attrs = append(attrs, keySlackMethod.String(method), keyURLPath.String(req.URL.Path))
	}
	_, span := tr.t.tracer.Start(req.Context(), "slack "+method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return roundTrip(span, tr.next, req)
}
