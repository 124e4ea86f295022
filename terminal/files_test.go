package terminal

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestPlanSaysFilesAreReadFirst: the plan checkpoint says how many files
// were given and that they are read first, and nothing when there are none.
func TestPlanSaysFilesAreReadFirst(t *testing.T) {
	p := pipeline.PlanPayload{Question: "How do heat pumps do in the cold?", Files: 2}
	if out := RenderCheckpoint(instance(t, checkpoints.PlanReview, p, nil)); !strings.Contains(out, "\nFiles: 2 files attached; they will be read first\n") {
		t.Errorf("plan does not say the files are read first:\n%s", out)
	}
	p.Files = 0
	if out := RenderCheckpoint(instance(t, checkpoints.PlanReview, p, nil)); strings.Contains(out, "Files:") {
		t.Errorf("a plan without files has a Files line:\n%s", out)
	}
}
