package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestPlanSaysFilesAreReadFirst: the plan checkpoint says how many files
// the run was given and that they are read first; nothing when none.
func TestPlanSaysFilesAreReadFirst(t *testing.T) {
	p := pipeline.PlanPayload{Question: "How do heat pumps do in the cold?", Methodology: "Field trials first.", Files: 3}
	b, err := json.Marshal(planBody(p))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `*Files:* 3 files attached; they will be read first`) {
		t.Errorf("plan blocks do not mention the files:\n%s", b)
	}
	p.Files = 0
	if b, _ = json.Marshal(planBody(p)); strings.Contains(string(b), "*Files:*") {
		t.Errorf("a plan without files has a Files line:\n%s", b)
	}
}
