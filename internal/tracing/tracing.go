// Package tracing records researchbot's runs as OpenTelemetry traces: one
// trace per run, whichever processes advance it, with a span for each step,
// model call, search, page fetch and outgoing HTTP call (the LLM and search
// APIs, Slack's Web API) made within it.
//
// It is the one room for the OpenTelemetry SDK. The engine sees only the
// pipeline.Tracer port; the wiring (internal/app, cmd) asks this package for
// the spans of the adapters' calls. Tracing is off unless the standard
// OTEL_* variables turn it on (see Configure); a nil *Tracing is valid and
// does nothing, so when it is off there is no exporter, no goroutine and no
// span.
package tracing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation in every span.
const scope = "github.com/researchbot/researchbot"

// Settings are the OTEL_* variables that decide whether and where traces go.
// The SDK reads the others (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG,
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, …) from the process environment itself.
type Settings struct {
	// On is set when traces are exported.
	On bool
	// Endpoint is the OTLP/HTTP traces URL; "" means the exporter's default
	// (http://localhost:4318/v1/traces, or what the environment says).
	Endpoint string
	// ServiceName is the service.name of every span (OTEL_SERVICE_NAME).
	ServiceName string
}

// EndpointForLog is the endpoint as a log may show it: a password in the
// URL is masked.
func (s Settings) EndpointForLog() string {
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}

// Configure reads the settings from getenv. Tracing is on when
// OTEL_TRACES_EXPORTER is "otlp", or when it is unset and an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set;
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. Only
// OTLP over HTTP (protobuf) is supported: other exporters and protocols are
// refused, all problems at once.
func Configure(getenv func(string) string) (Settings, error) {
	s := Settings{ServiceName: getenv("OTEL_SERVICE_NAME")}
	s.ServiceName = cmp.Or(s.ServiceName, "researchbot")
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	var problems []string
	base := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	s.Endpoint = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if s.Endpoint == "" && base != "" {
		s.Endpoint = strings.TrimRight(base, "/") + "/v1/traces"
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "":
		s.On = s.Endpoint != ""
	case "otlp":
		s.On = true
	case "none":
		return s, nil
	default:
		problems = append(problems, fmt.Sprintf("OTEL_TRACES_EXPORTER=%q: only otlp (or none) is supported", exp))
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" && p != "http/protobuf" {
			problems = append(problems, fmt.Sprintf("%s=%q: only http/protobuf is supported", name, p))
		}
	}
	if len(problems) > 0 {
		return Settings{}, errors.New("tracing: " + strings.Join(problems, "; "))
	}
	return s, nil
}

// Tracing makes the spans of runs. A nil *Tracing makes none.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	// shutdown flushes and stops the exporter; nil when the caller owns the
	// provider (New).
	shutdown func(context.Context) error
}

// Start starts exporting traces as s says: nil (and nothing started) when
// s is off. The caller must Shutdown the result.
func Start(ctx context.Context, s Settings) (*Tracing, error) {
	if !s.On {
		return nil, nil
	}
	var opts []otlptracehttp.Option
	if s.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(s.Endpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", s.ServiceName)))
	if err != nil && res == nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// No sampler option: the SDK takes OTEL_TRACES_SAMPLER (default
	// parentbased_always_on), so a run's steps follow its first span's
	// decision in every process.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t := New(tp)
	t.shutdown = tp.Shutdown
	return t, nil
}

// New makes spans with tp (tests pass one with an in-memory exporter); the
// caller owns tp.
func New(tp trace.TracerProvider) *Tracing {
	return &Tracing{tracer: tp.Tracer(scope), prop: propagation.TraceContext{}}
}

// Shutdown exports the spans still buffered and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}
