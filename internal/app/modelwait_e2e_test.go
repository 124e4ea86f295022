package app

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestAHungModelFailsTheStepWithinLLMStepWait: a model that accepts calls
// and never answers ends the run once the step has waited LLM_STEP_WAIT in
// all (not after attempts × retries × LLM_TIMEOUT), saying so; while it
// retries, progress says the model is not answering.
func TestAHungModelFailsTheStepWithinLLMStepWait(t *testing.T) {
	t.Parallel()
	hung := &researchtest.Researcher{Before: func(string, int) *llmtest.Reply {
		return &llmtest.Reply{Delay: time.Hour}
	}}
	const wait = 2500 * time.Millisecond
	h := newHarness(t, hung, map[string]string{"LLM_TIMEOUT": "200ms", "LLM_MAX_RETRIES": "4", "LLM_STEP_WAIT": wait.String()})
	start := time.Now()
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	took := time.Since(start)
	t.Logf("hung model, LLM_TIMEOUT=200ms, LLM_STEP_WAIT=%s: run %s after %v, %d calls: %s", wait, r.Status, took.Round(10*time.Millisecond), len(h.llm.Calls()), r.Failure)
	if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "the model did not answer within 2.5s") {
		t.Fatalf("status %s, failure %q; want failed, saying the model did not answer within 2.5s", r.Status, r.Failure)
	}
	if took > wait+5*time.Second {
		t.Errorf("the run took %v to end, bound LLM_STEP_WAIT %v (+5s)", took, wait)
	}
	h.rec.mu.Lock()
	notices := strings.Join(h.rec.notices, "\n")
	h.rec.mu.Unlock()
	if !strings.Contains(notices, "the model is not answering (retry 2 of 4 in ") {
		t.Errorf("the retries were not shown as progress:\n%s", notices)
	}
	if strings.Contains(notices, "trying again") {
		t.Errorf("the step was attempted again after its wait for the model was used up:\n%s", notices)
	}
}
