package tracing

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/researchbot/researchbot/pipeline"
)

// Attribute keys: the OpenTelemetry semantic conventions' where they have
// one (GenAI, HTTP, URL), researchbot's own otherwise.
const (
	keyGenAIOperation    = attribute.Key("gen_ai.operation.name")
	keyGenAIRequestModel = attribute.Key("gen_ai.request.model")
	keyGenAIOutputType   = attribute.Key("gen_ai.output.type")
	keyGenAIInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	keyGenAIOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	keyLLMRole           = attribute.Key("researchbot.llm.role")
	keyLLMSchema         = attribute.Key("researchbot.llm.schema")
	keyLLMCost           = attribute.Key("researchbot.llm.cost_usd")
	keyLLMCalls          = attribute.Key("researchbot.llm.calls")
	keySearchKind        = attribute.Key("researchbot.search.kind")
	keySearchHits        = attribute.Key("researchbot.search.hits")
	keySearchBackend     = "researchbot.search.backend." // + name: how it did
	keyFetchOutcome      = attribute.Key("researchbot.fetch.outcome")
	keyFetchTextBytes    = attribute.Key("researchbot.fetch.text_bytes")
	keyURLFull           = attribute.Key("url.full")
	keyServerAddress     = attribute.Key("server.address")
	keyHTTPMethod        = attribute.Key("http.request.method")
	keyHTTPStatus        = attribute.Key("http.response.status_code")
	keyURLPath           = attribute.Key("url.path")
)

// within reports whether ctx carries a span: calls are traced only within a
// run's trace, never as traces of their own.
func within(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid()
}

// noEnd is the end of a span that was not started.
func noEnd[T any](T, error) {}

// ModelCall starts the span of one model call (GenAI semantic conventions:
// "chat <model>", kind client); end records its usage — model, tokens,
// cost — and its error.
func (t *Tracing) ModelCall(ctx context.Context, p pipeline.Prompt, model string) (context.Context, func(pipeline.Usage, error)) {
	if t == nil || !within(ctx) {
		return ctx, noEnd[pipeline.Usage]
	}
	ctx, span := t.tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		keyGenAIOperation.String("chat"), keyGenAIRequestModel.String(model), keyGenAIOutputType.String("json"),
		keyLLMRole.String(string(p.Role)), keyLLMSchema.String(p.Name)))
	return ctx, func(u pipeline.Usage, err error) {
		span.SetAttributes(keyGenAIInputTokens.Int(u.PromptTokens), keyGenAIOutputTokens.Int(u.CompletionTokens),
			keyLLMCost.Float64(u.CostUSD), keyLLMCalls.Int(u.Calls))
		end(span, err)
	}
}

// Search starts the span of one query sent to every search backend; end
// records the hits and how each backend did (results, empty, error,
// rate_limited). Each backend's HTTP call is a child span (Transport).
func (t *Tracing) Search(ctx context.Context, r pipeline.SearchRequest) (context.Context, func(hits int, backends map[string]string)) {
	if t == nil || !within(ctx) {
		return ctx, func(int, map[string]string) {}
	}
	ctx, span := t.tracer.Start(ctx, "search", trace.WithAttributes(keySearchKind.String(r.Kind)))
	return ctx, func(hits int, backends map[string]string) {
		span.SetAttributes(keySearchHits.Int(hits))
		for name, outcome := range backends {
			span.SetAttributes(attribute.String(keySearchBackend+name, outcome))
		}
		span.End()
	}
}

// Fetch starts the span of one page fetch; end records how it ended (the
// status class or the fetcher's reason) and the bytes of text it gave.
func (t *Tracing) Fetch(ctx context.Context, pageURL string) (context.Context, func(outcome string, textBytes int, err error)) {
	if t == nil || !within(ctx) {
		return ctx, func(string, int, error) {}
	}
	ctx, span := t.tracer.Start(ctx, "fetch", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(keyURLFull.String(pageURL)))
	return ctx, func(outcome string, textBytes int, err error) {
		span.SetAttributes(keyFetchOutcome.String(outcome), keyFetchTextBytes.Int(textBytes))
		end(span, err)
	}
}

// HTTPClient returns a copy of c (nil: a client with timeout) whose calls
// within a run are spans, or c itself when t is nil.
func (t *Tracing) HTTPClient(c *http.Client, timeout time.Duration) *http.Client {
	if t == nil {
		return c
	}
	return withTransport(c, timeout, t.Transport)
}

// withTransport returns a copy of c (nil: a client with timeout) whose
// transport is wrap(c's transport).
func withTransport(c *http.Client, timeout time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	if c == nil {
		c = &http.Client{Timeout: timeout}
	}
	cp := *c
	cp.Transport = wrap(c.Transport)
	return &cp
}

// Transport wraps next (nil: http.DefaultTransport) so that each request
// made within a run's trace is a client span named by its method, with the
// server's address, the URL's path and the response status (no query
// string: search APIs may carry keys there). Requests outside a run are
// not traced, and no trace header is sent to the servers called.
func (t *Tracing) Transport(next http.RoundTripper) http.RoundTripper {
	next = cmp.Or(next, http.DefaultTransport)
	if t == nil {
		return next
	}
	return &transport{t: t, next: next}
}

type transport struct {
	t    *Tracing
	next http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !within(ctx) {
		return tr.next.RoundTrip(req)
	}
	_, span := tr.t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		keyHTTPMethod.String(req.Method), keyServerAddress.String(req.URL.Hostname()), keyURLPath.String(req.URL.Path)))
	return roundTrip(span, tr.next, req)
}

// roundTrip sends req through next and ends span with the outcome: the
// response's status, or the error's cause — a *url.Error names the URL,
// whose query string (a search API's key) or path (a Slack response_url)
// is not recorded.
func roundTrip(span trace.Span, next http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		cause := err
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			cause = ue.Err
		}
		end(span, cause)
		return nil, err
	}
	span.SetAttributes(keyHTTPStatus.Int(resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, resp.Status)
	}
	span.End()
	return resp, nil
}
