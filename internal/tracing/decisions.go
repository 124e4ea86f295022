package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// keyAction is the decision a person took on a checkpoint.
const keyAction = attribute.Key("researchbot.checkpoint.action")

// Decision records a person's decision on a checkpoint of a run (an
// instance of definitionID) as a span of the run's trace: a child of the
// run's first span, from traceContext, the context kept with the run. The
// bot handles a decision outside any step (in `serve`, where no run's span
// is in the context), so without it the decision would be in no trace.
// The span runs from start to now, with err (a refused or unconfirmed
// decision) as its status. Nothing is recorded when t is nil or the run
// has no trace context.
func (t *Tracing) Decision(ctx context.Context, traceContext, runID, definitionID, action string, start time.Time, err error) {
	if t == nil || traceContext == "" {
		return
	}
	ctx = t.prop.Extract(ctx, propagation.MapCarrier{traceparent: traceContext})
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return // a stored context that does not parse: no trace of its own
	}
	_, span := t.tracer.Start(ctx, "decision "+definitionID, trace.WithTimestamp(start), trace.WithAttributes(
		keyRunID.String(runID), keyDefID.String(definitionID), keyAction.String(action)))
	end(span, err)
}
