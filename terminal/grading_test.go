package terminal

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// The terminal's draft review counts the findings' grades.
func TestRenderDraftCountsTheGrades(t *testing.T) {
	inst := instance(t, checkpoints.DraftReview, pipeline.DraftPayload{Version: 1, Title: "Heat pumps", Evidence: "1 moderate, 1 gap"}, nil)
	if got := RenderCheckpoint(inst); !strings.Contains(got, "Evidence behind the key findings: 1 moderate, 1 gap\n") {
		t.Errorf("the draft review does not count the grades:\n%s", got)
	}
}
