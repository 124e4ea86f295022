package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// errModelWaitUsed is the cause of a model call cut because its step used
// up its wait for the model.
var errModelWaitUsed = errors.New("the step's wait for the model is used up")

// modelSilentError ends a step that waited for the model longer than
// Config.ModelWait in all; retrying would only wait more, so it is
// ErrModelUnusable.
type modelSilentError struct{ limit time.Duration }

func (e *modelSilentError) Error() string {
	return fmt.Sprintf("the model did not answer within %s (LLM_STEP_WAIT)", e.limit)
}

func (e *modelSilentError) Unwrap() error { return ErrModelUnusable }

// Plan bounds (seed 001 §2.1).
const (
	minSubQuestions, maxSubQuestions = 3, 7
	minQueries, maxQueries           = 5, 15
	rankBatchSize                    = 20
	maxShrinks                       = 3
	sourceReviewOptions              = 25
)

// generate makes one LLM call and books its usage on the run. The time a
// call brings no answer counts against the step's wait for the model
// (Config.ModelWait): the call is cut when the step has none left, and then
// the step fails for good.
func (e *Engine) generate(ctx context.Context, r *Run, role Role, name, system, user string, out any) error {
	start := e.cfg.Clock.Now()
	limit := e.cfg.ModelWait
	if limit > 0 {
		left := limit - r.Attempt.ModelWait
		if left <= 0 {
			return &modelSilentError{limit: limit}
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, left, errModelWaitUsed)
		defer cancel()
	}
	u, err := e.cfg.Model.Generate(ctx, Prompt{Role: role, Name: name, System: system, User: user, OnRetry: e.modelRetryNotice(ctx, r)}, out)
	if err != nil && limit > 0 {
		r.Attempt.ModelWait += e.cfg.Clock.Now().Sub(start)
		if errors.Is(context.Cause(ctx), errModelWaitUsed) || r.Attempt.ModelWait >= limit {
			err = &modelSilentError{limit: limit}
		}
	}
	// A summary for operators (LOG_LEVEL=debug); never the prompt or the answer.
	e.log.Debug("llm call", "run", r.ID, "role", role, "schema", name, "model", u.Model, "duration", e.cfg.Clock.Now().Sub(start),
		"prompt_tokens", u.PromptTokens, "completion_tokens", u.CompletionTokens, "calls", u.Calls, "cost_usd", u.CostUSD, "ok", err == nil)
	r.Spend.add(u)
	if u.UnknownPrice {
		r.addBound(fmt.Sprintf("the price of model %q is unknown (set LLM_PRICES): its cost is counted as $0, so the cost limit does not cover it", u.Model))
	}
	if e.cfg.Observer != nil {
		e.cfg.Observer.LLMUsage(role, u)
	}
	return err
}

// overBudget records and reports a cost or working-time bound that was hit.
func (e *Engine) overBudget(r *Run) bool {
	hit := false
	if r.Limits.MaxCostUSD > 0 && r.Spend.CostUSD >= r.Limits.MaxCostUSD {
		r.addBound(fmt.Sprintf("cost limit reached: spent $%.4f of $%.4f; the report was written with what the run had", r.Spend.CostUSD, r.Limits.MaxCostUSD))
		hit = true
	}
	if r.Limits.MaxWall > 0 && r.Active >= r.Limits.MaxWall {
		r.addBound(fmt.Sprintf("time limit reached: %s of working time (limit %s); the report was written with what the run had", r.Active.Round(time.Second), r.Limits.MaxWall))
		hit = true
	}
	return hit
}

// toFallback routes the run to the fallback with a reason.
func (r *Run) toFallback(reason string) {
	r.FallbackReason = cmp.Or(r.FallbackReason, reason)
	r.Step = StepFallback
}

func clamp01(f float64) float64 { return max(0, min(1, f)) }

// step is one entry of the run's step table: what it does, how long one
// attempt may take, and how many attempts it gets (counted in the run
// record, across workers).
//
// A local step (Local instead of Run) only computes from the run in hand:
// no I/O, no model, and it cannot fail. When the run goes straight on to
// one after a step that ended normally, it runs in that step's save
// (Engine.runLocalSteps).
type step struct {
	Name    Step
	Run     func(context.Context, *Run) error
	Local   func(*Run)
	Timeout time.Duration // bounds one attempt; a step past it fails that attempt
	Retry   int           // attempts before the run ends with the cause
}

// stepTable is the engine's steps; each step sets r.Step to the one that
// follows it (the routing lives with the step).
type stepTable []step

// lookup returns the named step; an unknown name (a record written by
// another version) is a step that fails, so the run ends with the cause.
func (t stepTable) lookup(name Step) step {
	for _, s := range t {
		if s.Name == name {
			return s
		}
	}
	return step{Name: name, Retry: MaxStepAttempts, Run: func(context.Context, *Run) error {
		return fmt.Errorf("unknown step %q", name)
	}}
}

// Attempt bounds. LLM steps make several model calls, each with its own
// timeout and retries, so they get the longest.
const (
	llmStepTimeout   = 20 * time.Minute
	ioStepTimeout    = 10 * time.Minute
	localStepTimeout = time.Minute
)

// newStepTable lists the steps of a research run.
func (e *Engine) newStepTable() stepTable {
	return stepTable{
		{Name: StepPlan, Run: e.stepPlan, Timeout: llmStepTimeout, Retry: MaxStepAttempts},
		{Name: StepSearch, Run: e.stepSearch, Timeout: ioStepTimeout, Retry: MaxStepAttempts},
		{Name: StepRank, Run: e.stepRank, Timeout: llmStepTimeout, Retry: MaxStepAttempts},
		{Name: StepFetch, Run: e.stepFetch, Timeout: ioStepTimeout, Retry: MaxStepAttempts},
		{Name: StepAnalyze, Run: e.stepAnalyze, Timeout: llmStepTimeout, Retry: MaxStepAttempts},
		{Name: StepWrite, Run: e.stepWrite, Timeout: llmStepTimeout, Retry: MaxStepAttempts},
		{Name: StepReview, Run: e.stepReview, Timeout: llmStepTimeout, Retry: MaxStepAttempts},
		{Name: StepOutput, Local: e.stepOutput, Timeout: localStepTimeout, Retry: MaxStepAttempts},
		{Name: StepFallback, Local: e.stepFallback, Timeout: localStepTimeout, Retry: MaxStepAttempts},
	}
}

// execStep runs one attempt at st within its timeout.
func (e *Engine) execStep(ctx context.Context, r *Run, st step) error {
	if st.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, st.Timeout)
		defer cancel()
	}
	if st.Local != nil {
		st.Local(r)
		return nil
	}
	return st.Run(ctx, r)
}

// attempts is how many attempts the named step gets.
func (e *Engine) attempts(name Step) int {
	return e.steps.lookup(name).Retry
}
