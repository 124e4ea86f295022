package tracing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TestEverySlackCallIsASpanNamedByItsMethod: each request of the Slack
// client is a client span "slack <method>": a child of the decision whose
// context it is made in, a trace of its own outside any; a response_url
// (a permission in itself) is named by its kind with no path; no token,
// message or query string in any attribute; no trace header sent to Slack.
func TestEverySlackCallIsASpanNamedByItsMethod(t *testing.T) {
	tr, spans := recorded(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			t.Error("a trace header was sent to Slack")
		}
		if strings.HasSuffix(r.URL.Path, "chat.update") {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	c := tr.SlackHTTPClient(srv.Client(), 0)
	post := func(ctx context.Context, path string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path,
			strings.NewReader(url.Values{"token": {"xoxb-secret"}, "text": {"a private message"}}.Encode()))
		req.Header.Set("Authorization", "Bearer xoxb-secret")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	post(context.Background(), "/api/apps.connections.open")
	ctx, end := tr.StartDecision(context.Background(), tr.Runs().StartRun(context.Background(), "r"), "r", "plan_review", "approve")
	post(ctx, "/api/chat.postMessage?token=xoxb-secret")
	post(ctx, "/api/chat.update")
	post(ctx, "/hooks/actions/T1/123/s3cr3t")
	end(nil)

	byName := map[string]int{}
	got := spans.GetSpans()
	for i, s := range got {
		byName[s.Name] = i
		for _, kv := range s.Attributes {
			for _, secret := range []string{"secret", "private", "s3cr3t"} {
				if strings.Contains(kv.Value.String(), secret) {
					t.Errorf("span %s: attribute %s = %q", s.Name, kv.Key, kv.Value.String())
				}
			}
		}
	}
	for _, name := range []string{"slack apps.connections.open", "slack chat.postMessage", "slack chat.update", "slack response_url", "decision plan_review"} {
		if _, ok := byName[name]; !ok {
			t.Fatalf("no span %q among %d", name, len(got))
		}
	}
	decision := got[byName["decision plan_review"]]
	for _, name := range []string{"slack chat.postMessage", "slack chat.update", "slack response_url"} {
		s := got[byName[name]]
		if s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != decision.SpanContext.SpanID() || s.SpanContext.TraceID() != decision.SpanContext.TraceID() {
			t.Errorf("%s is not a client span under the decision: kind %v, parent %s", name, s.SpanKind, s.Parent.SpanID())
		}
	}
	if open := got[byName["slack apps.connections.open"]]; open.Parent.IsValid() || open.SpanContext.TraceID() == decision.SpanContext.TraceID() {
		t.Errorf("a call outside any trace is not a trace of its own: parent %v", open.Parent)
	}
	attrs := map[string]string{}
	for _, kv := range got[byName["slack chat.postMessage"]].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["researchbot.slack.method"] != "chat.postMessage" || attrs["url.path"] != "/api/chat.postMessage" || attrs["http.response.status_code"] != "200" {
		t.Errorf("chat.postMessage attributes %v", attrs)
	}
	for _, kv := range got[byName["slack response_url"]].Attributes {
		if kv.Key == keyURLPath {
			t.Errorf("a response_url's path is recorded: %s", kv.Value.String())
		}
	}
	if s := got[byName["slack chat.update"]].Status; s.Code != codes.Error {
		t.Errorf("a 429 is not an error: %+v", s)
	}
}

// TestSlackTracingOffIsTheClientItself: with tracing off the Slack client
// and transport are the ones passed in.
func TestSlackTracingOffIsTheClientItself(t *testing.T) {
	var off *Tracing
	c := &http.Client{}
	if off.SlackHTTPClient(c, 0) != c || off.SlackHTTPClient(nil, 0) != nil {
		t.Error("tracing off changed the Slack client")
	}
	if off.SlackTransport(nil) != http.DefaultTransport {
		t.Error("tracing off wrapped the Slack transport")
	}
}
