package app

import (
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// The plan's estimate is priced with LLM_PRICES, through the engine's
// explicit Prices port.
func TestAPlansEstimateIsPricedWithTheModelsPrices(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Estimate == nil || r.Estimate.CostUSD <= 0 {
		t.Fatalf("the estimate is %+v; want a cost priced with LLM_PRICES", r.Estimate)
	}
}
