package bot

import (
	"context"

	"github.com/researchbot/researchbot/pipeline"
)

// RecordVerdict keeps one verdict per person on each report or answer, like
// the engine.
func (e *fakeEngine) RecordVerdict(_ context.Context, runID string, v pipeline.Verdict) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	if r.Report == nil {
		return e.clone(r), pipeline.ErrNoReport
	}
	for i := range r.Verdicts {
		if r.Verdicts[i].By == v.By && r.Verdicts[i].On == v.On {
			r.Verdicts[i] = v
			return e.clone(r), nil
		}
	}
	r.Verdicts = append(r.Verdicts, v)
	return e.clone(r), nil
}
