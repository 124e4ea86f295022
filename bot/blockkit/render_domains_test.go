package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestPlanShowsTheRunsDomainRules: the plan checkpoint states the run's
// domain rules on a "Sources:" line, and says nothing when there are none.
func TestPlanShowsTheRunsDomainRules(t *testing.T) {
	p := pipeline.PlanPayload{Question: "How do heat pumps do in the cold?", Methodology: "Field trials first.",
		Domains: "only example.org · never spam.example"}
	b, err := json.Marshal(planBody(p))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `*Sources:* only example.org · never spam.example`) {
		t.Errorf("plan blocks do not state the domain rules:\n%s", b)
	}
	p.Domains = ""
	if b, _ = json.Marshal(planBody(p)); strings.Contains(string(b), "*Sources:*") {
		t.Errorf("a plan without domain rules has a Sources line:\n%s", b)
	}
}
