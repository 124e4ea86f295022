package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/researchbot/researchbot/internal/tracing"
)

// tracingFlushTimeout bounds how long a process that stops waits to export
// the spans it still holds.
const tracingFlushTimeout = 5 * time.Second

// startTracing turns on OpenTelemetry traces when the OTEL_* variables ask
// for them (nil, and nothing started, when they do not); stop exports what
// is left and must be called after the App is closed.
func startTracing(ctx context.Context, getenv func(string) string, log *slog.Logger) (t *tracing.Tracing, stop func(), err error) {
	s, err := tracing.Configure(getenv)
	if err != nil {
		return nil, nil, &exitError{code: 2, msg: "researchbot: " + err.Error()}
	}
	t, err = tracing.Start(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if t != nil {
		log.Info("tracing on: exporting OpenTelemetry traces over OTLP/HTTP", "endpoint", s.EndpointForLog(), "service", s.ServiceName)
	}
	return t, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			log.Warn("tracing: the last spans were not exported", "err", err)
		}
	}, nil
}
