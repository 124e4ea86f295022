//go:build faults

package faults

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// modelRun runs one auto run against a model whose replies before may
// replace, on one replica on a private Redis; it returns the finished run
// and how long it took.
func modelRun(t *testing.T, env map[string]string, before func(schema string, n int) *llmtest.Reply) (*world, *pipeline.Run, time.Duration) {
	t.Helper()
	rp := startRedis(t)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{Before: before}, env)
	a := w.replica(w.redis, true)
	start := time.Now()
	w.start(a, checkpoints.ModeAuto, "")
	r := w.rec.finish(t)
	return w, r, time.Since(start)
}

// TestModel503Burst: the model answers 503 to three calls in a row (more
// than the client's retries); the step is tried again and the run completes.
func TestModel503Burst(t *testing.T) {
	w, r, took := modelRun(t, nil, func(schema string, n int) *llmtest.Reply {
		if schema == "research_plan" && n <= 3 {
			return &llmtest.Reply{Status: 503, ErrorType: "server_error", ErrorMessage: "overloaded"}
		}
		return nil
	})
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("run %s: %s", r.Status, r.Failure)
	}
	_, _, started, _ := w.model.stats("research_plan")
	s := w.settings()
	within(t, "3×503 then success: the run completed in", took, bound[time.Duration]{
		"5 s of steps + 3 failed calls × 3.4 s client back-off + step retry delays",
		func(x settings) time.Duration { return stepsWork + 3*llmBackoff3 + x.stepRetries },
	}, s)
	within(t, "plan calls", len(started), stepCalls, s)
}

// TestModelHangs: the model's first analysis never answers; LLM_TIMEOUT
// ends the call, it is retried and the run completes.
func TestModelHangs(t *testing.T) {
	w, r, took := modelRun(t, map[string]string{"LLM_TIMEOUT": "2s"}, func(schema string, n int) *llmtest.Reply {
		if schema == "analysis" && n == 1 {
			return &llmtest.Reply{Delay: time.Hour}
		}
		return nil
	})
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("run %s: %s", r.Status, r.Failure)
	}
	_, peak, started, _ := w.model.stats("analysis")
	s := w.settings()
	within(t, "a hung call: the run completed in", took, bound[time.Duration]{
		"LLM_TIMEOUT + 1.5 s client back-off + 5 s of steps",
		func(x settings) time.Duration { return x.llmTimeout + llmBackoff + stepsWork },
	}, s)
	t.Logf("%d analysis calls", len(started))
	within(t, "analysis calls in flight at once (the hung one abandoned)", peak, oneCallInFlight, s)
}

// TestModelHangsForever: every call hangs; the run fails within its bound
// (3 step attempts × (1 + LLM_MAX_RETRIES) calls × LLM_TIMEOUT, plus the
// step's back-off) with a reason that says the model timed out.
func TestModelHangsForever(t *testing.T) {
	w, r, took := modelRun(t, map[string]string{"LLM_TIMEOUT": "1s"}, func(string, int) *llmtest.Reply {
		return &llmtest.Reply{Delay: time.Hour}
	})
	_, _, started, _ := w.model.stats("research_plan")
	if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "the plan step failed 3 times") {
		t.Fatalf("run %s: %q", r.Status, r.Failure)
	}
	s := w.settings()
	t.Logf("the model hangs on every call: run %s: %s", r.Status, r.Failure)
	within(t, "the run failed after", took, hungModel, s)
	within(t, "plan calls", len(started), stepCalls, s)
}

// TestModelCutOffAtTheTokenLimit: an answer cut off (finish_reason
// "length", truncated JSON) is repaired by a second call; an answer always
// cut off ends the run with that reason.
func TestModelCutOffAtTheTokenLimit(t *testing.T) {
	cut := &llmtest.Reply{Content: `{"sub_questions": [{"question": "How`, FinishReason: "length"}
	t.Run("once", func(t *testing.T) {
		w, r, took := modelRun(t, nil, func(schema string, n int) *llmtest.Reply {
			if schema == "research_plan" && n == 1 {
				return cut
			}
			return nil
		})
		if r.Status != pipeline.StatusCompleted {
			t.Fatalf("run %s: %s", r.Status, r.Failure)
		}
		_, _, started, _ := w.model.stats("research_plan")
		s := w.settings()
		within(t, "one answer cut off: repaired, the run completed in", took, allSteps, s)
		within(t, "plan calls (the repair one more)", len(started), bound[int]{"2", func(settings) int { return 2 }}, s)
	})
	t.Run("always", func(t *testing.T) {
		w, r, took := modelRun(t, nil, func(schema string, _ int) *llmtest.Reply {
			if schema == "research_plan" {
				return cut
			}
			return nil
		})
		_, _, started, _ := w.model.stats("research_plan")
		if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "its answer was cut off at the token limit") {
			t.Fatalf("run %s: %q", r.Status, r.Failure)
		}
		s := w.settings()
		t.Logf("every answer cut off: run %s: %s", r.Status, r.Failure)
		within(t, "the run failed after", took, bound[time.Duration]{"5 s of steps + step retry delays",
			func(x settings) time.Duration { return stepsWork + x.stepRetries }}, s)
		within(t, "plan calls (a repair per step attempt)", len(started), bound[int]{"3 step attempts × 2",
			func(settings) int { return pipeline.MaxStepAttempts * 2 }}, s)
	})
}

// allSteps bounds a run whose model answers at once: its steps.
var allSteps = bound[time.Duration]{"5 s of steps", func(settings) time.Duration { return stepsWork }}

// hungModel bounds a run whose model never answers: every step attempt
// makes 1 + LLM_MAX_RETRIES calls that each time out, with a client
// back-off between them, and the step's wait for the model is cut at
// LLM_STEP_WAIT; then the steps' own work.
var hungModel = bound[time.Duration]{
	"min(3 × (1 + LLM_MAX_RETRIES) × (LLM_TIMEOUT + 3.4 s), LLM_STEP_WAIT + 3.4 s) + step retry delays + 5 s of steps",
	func(x settings) time.Duration {
		calls := time.Duration(pipeline.MaxStepAttempts * (1 + x.llmRetries))
		return min(calls*(x.llmTimeout+llmBackoff3), x.stepWait+llmBackoff3) + x.stepRetries + stepsWork
	},
}

// llmBackoff3 bounds the third of the model client's waits between
// retries (1 s, ×1.5 each time, ±50 % jitter): 2.25 s × 1.5.
const llmBackoff3 = 3375 * time.Millisecond
