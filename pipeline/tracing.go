package pipeline

import "context"

// Tracer records a run as one trace, whichever processes advance it: the
// trace context is an opaque string kept with the run (Run.TraceContext),
// and each step's span is a child of it. The engine knows no tracing
// library; an adapter implements the port. A nil Tracer records nothing.
type Tracer interface {
	// StartRun begins the trace of a new run (a child of what ctx carries,
	// if anything) and returns its context, to be kept with the run; ""
	// means the run is not traced.
	StartRun(ctx context.Context, runID string) string
	// StartStep starts the span of one attempt at a step of a run whose
	// trace context is traceContext. The returned context carries the span
	// (the model, search, fetch and Slack calls of the step are its
	// children); end ends it with the step's outcome.
	StartStep(ctx context.Context, traceContext, runID string, step Step, attempt int) (_ context.Context, end func(error))
	// StartCheckpoint starts the span of showing a checkpoint (an instance
	// of definitionID) to people, between steps: the presenter's calls are
	// its children.
	StartCheckpoint(ctx context.Context, traceContext, runID, definitionID string) (_ context.Context, end func(error))
}

// traceRun starts r's trace unless it has one (a run created before tracing
// was turned on gets one at its next step).
func (e *Engine) traceRun(ctx context.Context, r *Run) {
	if e.cfg.Tracer != nil && r.TraceContext == "" {
		r.TraceContext = e.cfg.Tracer.StartRun(ctx, r.ID)
	}
}

// traceStep starts the span of r's current step attempt.
func (e *Engine) traceStep(ctx context.Context, r *Run) (context.Context, func(error)) {
	if e.cfg.Tracer == nil || r.TraceContext == "" {
		return ctx, func(error) {}
	}
	return e.cfg.Tracer.StartStep(ctx, r.TraceContext, r.ID, r.Step, r.Attempt.N)
}

// traceCheckpoint starts the span of showing r's checkpoint, an instance
// of definitionID.
func (e *Engine) traceCheckpoint(ctx context.Context, r *Run, definitionID string) (context.Context, func(error)) {
	if e.cfg.Tracer == nil || r.TraceContext == "" {
		return ctx, func(error) {}
	}
	return e.cfg.Tracer.StartCheckpoint(ctx, r.TraceContext, r.ID, definitionID)
}
