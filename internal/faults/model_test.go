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
	figure(t, "3×503 then success: run completed in %s, %d plan calls", took.Round(10*time.Millisecond), len(started))
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
	figure(t, "a hung call (LLM_TIMEOUT 2s): run completed in %s, %d analysis calls, at most %d at once", took.Round(10*time.Millisecond), len(started), peak)
	if peak > 1 {
		t.Errorf("%d analysis calls in flight at once: the hung one was not abandoned", peak)
	}
}

// TestModelHangsForever: every call hangs; the run fails within its bound
// (3 step attempts × (1 + LLM_MAX_RETRIES) calls × LLM_TIMEOUT, plus the
// step's back-off) with a reason that says the model timed out.
func TestModelHangsForever(t *testing.T) {
	w, r, took := modelRun(t, map[string]string{"LLM_TIMEOUT": "1s"}, func(string, int) *llmtest.Reply {
		return &llmtest.Reply{Delay: time.Hour}
	})
	_, _, started, _ := w.model.stats("research_plan")
	figure(t, "the model hangs on every call (LLM_TIMEOUT 1s): run %s after %s, %d calls: %s", r.Status, took.Round(10*time.Millisecond), len(started), r.Failure)
	if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "the plan step failed 3 times") {
		t.Fatalf("run %s: %q", r.Status, r.Failure)
	}
	if bound := pipeline.MaxStepAttempts * 2; len(started) > bound {
		t.Errorf("%d calls, bound %d", len(started), bound)
	}
	if took > time.Minute {
		t.Errorf("took %s to give up", took)
	}
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
		figure(t, "one answer cut off: repaired, run completed in %s with %d plan calls", took.Round(10*time.Millisecond), len(started))
	})
	t.Run("always", func(t *testing.T) {
		w, r, took := modelRun(t, nil, func(schema string, _ int) *llmtest.Reply {
			if schema == "research_plan" {
				return cut
			}
			return nil
		})
		_, _, started, _ := w.model.stats("research_plan")
		figure(t, "every answer cut off: run %s after %s, %d plan calls: %s", r.Status, took.Round(10*time.Millisecond), len(started), r.Failure)
		if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "its answer was cut off at the token limit") {
			t.Fatalf("run %s: %q", r.Status, r.Failure)
		}
	})
}
