package terminal

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestPlanShowsTheRunsDomainRules: the plan checkpoint states the run's
// domain rules on a "Sources:" line, and says nothing when there are none.
func TestPlanShowsTheRunsDomainRules(t *testing.T) {
	p := pipeline.PlanPayload{Question: "How do heat pumps do in the cold?", Domains: "only example.org · never spam.example"}
	if out := RenderCheckpoint(instance(t, checkpoints.PlanReview, p, nil)); !strings.Contains(out, "\nSources: only example.org · never spam.example\n") {
		t.Errorf("plan does not state the domain rules:\n%s", out)
	}
	p.Domains = ""
	if out := RenderCheckpoint(instance(t, checkpoints.PlanReview, p, nil)); strings.Contains(out, "Sources:") {
		t.Errorf("a plan without domain rules has a Sources line:\n%s", out)
	}
}
