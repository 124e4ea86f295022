package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// The draft review counts the key findings by evidence grade (golden).
func TestGoldenDraftWithEvidenceGrades(t *testing.T) {
	inst := draftInstance()
	var p pipeline.DraftPayload
	if err := json.Unmarshal(inst.Payload, &p); err != nil {
		t.Fatal(err)
	}
	p.Evidence = "2 strong, 1 moderate, 1 weak, 1 gap"
	inst.Payload = mustJSON(p)
	blocks := blockkit.RenderCheckpoint(inst, "U123")
	golden(t, "msg_checkpoint_draft_graded", msg(blocks))
	if !strings.Contains(DisplayedText(mustJSON(blocks)), "Evidence behind the key findings:* 2 strong, 1 moderate, 1 weak, 1 gap") {
		t.Error("the draft review does not count the grades")
	}
	if probs := blockProblems(blocks, blockkit.MaxBlocks); len(probs) > 0 {
		t.Errorf("limits: %v", probs)
	}
}
