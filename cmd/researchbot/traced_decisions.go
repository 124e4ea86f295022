package main

import (
	"context"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/pipeline"
)

// tracedDecisions is the bot's engine in `serve` with each person's
// decision recorded in its run's trace. The bot handles a click or a form
// outside any run's span, so the tracing client's rule (calls are traced
// only within a run's trace) would leave the decision in no trace: this
// joins it to the trace context kept with the run (Run.TraceContext), the
// one every worker's steps continue, whichever process holds it.
type tracedDecisions struct {
	bot.Engine
	spans *tracing.Tracing
}

// withTracedDecisions wraps e when tracing is on, and is e itself when off.
func withTracedDecisions(e bot.Engine, spans *tracing.Tracing) bot.Engine {
	if spans == nil {
		return e
	}
	return tracedDecisions{Engine: e, spans: spans}
}

// Decide records the decision as the engine does, then its span, from when
// it was asked to now, with the refusal as its status: the run Decide
// returns carries the trace context, so no extra read of the store is made.
// A decision whose run could not be read (no run is returned) has no span.
func (e tracedDecisions) Decide(ctx context.Context, instanceID string, d checkpoints.Decision) (*pipeline.Run, error) {
	start := time.Now()
	r, err := e.Engine.Decide(ctx, instanceID, d)
	if r != nil {
		def := instanceID
		if inst := r.Instance(instanceID); inst != nil {
			def = inst.DefinitionID
		}
		e.spans.Decision(ctx, r.TraceContext, r.ID, def, string(d.Action), start, err)
	}
	return r, err
}
