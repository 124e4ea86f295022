package bot

import (
	"context"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// DecisionTracer records a person's decision on a checkpoint as a span of
// its run's trace (internal/tracing implements it). The bot handles a
// click or a form outside any step, so the decision joins the trace
// context kept with the run (Run.TraceContext); the context StartDecision
// returns carries the span, so the Slack calls made for the decision are
// its children. end ends the span with the decision's error as its status.
type DecisionTracer interface {
	StartDecision(ctx context.Context, traceContext, runID, definitionID, action string) (_ context.Context, end func(error))
}

// requestSpan is the span a handler joined its request to.
type requestSpan struct {
	ctx context.Context
	end func(error)
	err error // the span's status when it ends
}

// traceDecision starts the span of the decision d on the instance instID of
// r (loaded by App.check) and joins req to it: the handler's Slack calls
// made with the context returned, and its answer (App.serve), are the
// span's children. done records the decision's outcome (nil: recorded) as
// the span's status, which App.serve ends after answering. With no tracer,
// or a run without a trace context, ctx is returned as it is.
func (a *App) traceDecision(ctx context.Context, req *Request, r *pipeline.Run, instID string, d checkpoints.Decision) (_ context.Context, done func(error)) {
	if a.cfg.Checkpoints.Decisions == nil || r.TraceContext == "" || req.span != nil {
		return ctx, func(error) {}
	}
	def := instID
	if inst := r.Instance(instID); inst != nil {
		def = inst.DefinitionID
	}
	sctx, end := a.cfg.Checkpoints.Decisions.StartDecision(ctx, r.TraceContext, r.ID, def, string(d.Action))
	s := &requestSpan{ctx: sctx, end: end}
	req.span = s
	return sctx, func(err error) { s.err = err }
}
