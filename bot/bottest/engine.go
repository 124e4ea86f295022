package bottest

// The in-memory engine a feature's tests give the App.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is a bot.Engine that only keeps runs: the runs people start (a
// question that no feature takes starts one), released at their root
// message, and the runs a test puts in. Nothing runs; the checkpoint calls
// (bot's Decide, and Opened, Skip, Retry and ContinueWithout, which make it
// bot/decisions' Engine too) find no run. It is also bot/feedback's Engine: RecordVerdict keeps one
// verdict per person on each report or answer, like the engine. A test
// needing more embeds it and adds the methods of its feature's port. It is
// safe for concurrent use.
type Engine struct {
	mu   sync.Mutex
	runs map[string]*pipeline.Run
}

var _ bot.Engine = (*Engine)(nil)

// NewEngine returns an Engine with no runs.
func NewEngine() *Engine { return &Engine{runs: map[string]*pipeline.Run{}} }

// Put adds r (a copy) as it is, replacing any run with its ID.
func (e *Engine) Put(r *pipeline.Run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs[r.ID] = clone(r)
}

// Runs returns a copy of every run kept, in no order.
func (e *Engine) Runs() []*pipeline.Run {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*pipeline.Run, 0, len(e.runs))
	for _, r := range e.runs {
		out = append(out, clone(r))
	}
	return out
}

// clone copies r with its verdicts (what Engine changes in place).
func clone(r *pipeline.Run) *pipeline.Run {
	c := *r
	c.Verdicts = slices.Clone(r.Verdicts)
	return &c
}

// Start keeps the run req asks for, queued (or held).
func (e *Engine) Start(_ context.Context, req pipeline.Request) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &pipeline.Run{ID: req.ID, Question: req.Question, Mode: req.Mode, Depth: req.Depth, RequestedBy: req.RequestedBy,
		Origin: req.Origin, Status: pipeline.StatusQueued, Held: req.Held, CreatedAt: time.Now()}
	if r.ID == "" {
		r.ID = fmt.Sprintf("run-%d", len(e.runs)+1)
	}
	e.runs[r.ID] = r
	return clone(r), nil
}

// Release ends a held run's hold: it runs in the thread of threadTS.
func (e *Engine) Release(_ context.Context, runID, threadTS string) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	r.Held, r.Status, r.Origin.ThreadTS = false, pipeline.StatusRunning, threadTS
	return clone(r), nil
}

// Load returns a copy of run runID.
func (e *Engine) Load(_ context.Context, runID string) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	return clone(r), nil
}

// List returns the runs f.RequestedBy asked for (every run when "").
func (e *Engine) List(_ context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*pipeline.Run
	for _, r := range e.runs {
		if f.RequestedBy == "" || r.RequestedBy == f.RequestedBy {
			out = append(out, clone(r))
		}
	}
	return out, nil
}

// Withdraw forgets run runID.
func (e *Engine) Withdraw(_ context.Context, runID, _ string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.runs, runID)
	return nil
}

// RecordVerdict keeps one verdict per person on each report or answer: a
// person's second verdict on the same thing replaces the first. A run
// without a report answers pipeline.ErrNoReport.
func (e *Engine) RecordVerdict(_ context.Context, runID string, v pipeline.Verdict) (*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	if r.Report == nil {
		return clone(r), pipeline.ErrNoReport
	}
	for i := range r.Verdicts {
		if r.Verdicts[i].By == v.By && r.Verdicts[i].On == v.On {
			r.Verdicts[i] = v
			return clone(r), nil
		}
	}
	r.Verdicts = append(r.Verdicts, v)
	return clone(r), nil
}

// Decide finds no run: Engine has no checkpoints.
func (e *Engine) Decide(context.Context, string, checkpoints.Decision) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}

// Opened does nothing.
func (e *Engine) Opened(context.Context, string, string) error { return nil }

// Cancel finds no run.
func (e *Engine) Cancel(context.Context, string, string) error { return pipeline.ErrNotFound }

// Skip finds no checkpoint.
func (e *Engine) Skip(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}

// Retry finds no checkpoint.
func (e *Engine) Retry(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}

// ContinueWithout finds no checkpoint.
func (e *Engine) ContinueWithout(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}

// OfferLostAgain finds no run.
func (e *Engine) OfferLostAgain(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}
