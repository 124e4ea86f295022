package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/researchbot/researchbot/pipeline"
)

// Attribute keys of researchbot's own (no semantic convention has them).
const (
	keyRunID   = attribute.Key("researchbot.run.id")
	keyStep    = attribute.Key("researchbot.step")
	keyAttempt = attribute.Key("researchbot.step.attempt")
	keyDefID   = attribute.Key("researchbot.checkpoint.definition")
)

// traceparent is the W3C Trace Context header a run's context is kept as.
const traceparent = "traceparent"

// Runs is the engine's pipeline.Tracer, or nil when t is nil (so the
// engine's Config.Tracer stays a nil interface).
func (t *Tracing) Runs() pipeline.Tracer {
	if t == nil {
		return nil
	}
	return runs{t}
}

// runs implements pipeline.Tracer: a run's trace context is its first span's
// W3C traceparent ("00-<trace id>-<span id>-<flags>"), stored with the run,
// so a step that another process advances joins the same trace.
type runs struct{ t *Tracing }

// StartRun records the run's creation as the root of its trace (or a child
// of the span ctx carries) and returns that span's context.
func (r runs) StartRun(ctx context.Context, runID string) string {
	ctx, span := r.t.tracer.Start(ctx, "research run", trace.WithAttributes(keyRunID.String(runID)))
	span.End()
	carrier := propagation.MapCarrier{}
	r.t.prop.Inject(ctx, carrier)
	return carrier.Get(traceparent)
}

// StartStep starts a step's span as a child of the run's first span.
func (r runs) StartStep(ctx context.Context, traceContext, runID string, step pipeline.Step, attempt int) (context.Context, func(error)) {
	ctx = r.t.prop.Extract(ctx, propagation.MapCarrier{traceparent: traceContext})
	ctx, span := r.t.tracer.Start(ctx, "step "+string(step), trace.WithAttributes(
		keyRunID.String(runID), keyStep.String(string(step)), keyAttempt.Int(attempt)))
	return ctx, func(err error) { end(span, err) }
}

// StartCheckpoint starts the span of showing a checkpoint, a child of the
// run's first span.
func (r runs) StartCheckpoint(ctx context.Context, traceContext, runID, definitionID string) (context.Context, func(error)) {
	ctx = r.t.prop.Extract(ctx, propagation.MapCarrier{traceparent: traceContext})
	ctx, span := r.t.tracer.Start(ctx, "checkpoint "+definitionID, trace.WithAttributes(
		keyRunID.String(runID), keyDefID.String(definitionID)))
	return ctx, func(err error) { end(span, err) }
}

// end ends span with err as its status.
func end(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
