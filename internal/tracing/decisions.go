package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// keyAction is the decision a person took on a checkpoint.
const keyAction = attribute.Key("researchbot.checkpoint.action")

// StartDecision starts the span of a person's decision on a checkpoint of
// a run (an instance of definitionID) as a span of the run's trace: a child
// of the run's first span, from traceContext, the context kept with the
// run. The bot handles a decision outside any step (in `serve`, where no
// run's span is in the context), so without it the decision would be in no
// trace. The context returned carries the span, so the Slack calls the bot
// makes for the decision (its answer to the person) are its children; end
// ends it with err (a refused or unconfirmed decision) as its status.
// Nothing is recorded, and ctx is returned as it is, when t is nil or the
// run has no trace context (or one that does not parse).
func (t *Tracing) StartDecision(ctx context.Context, traceContext, runID, definitionID, action string) (context.Context, func(error)) {
	if t == nil || traceContext == "" {
		return ctx, func(error) {}
	}
	parent := t.prop.Extract(ctx, propagation.MapCarrier{traceparent: traceContext})
	if !trace.SpanContextFromContext(parent).IsValid() {
		return ctx, func(error) {} // a stored context that does not parse: no trace of its own
	}
	ctx, span := t.tracer.Start(parent, "decision "+definitionID, trace.WithAttributes(
		keyRunID.String(runID), keyDefID.String(definitionID), keyAction.String(action)))
	return ctx, func(err error) { end(span, err) }
}
