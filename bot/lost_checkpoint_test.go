package bot

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestGoldenLostCheckpoint: a checkpoint offered again after its decision
// was lost says so under its header and keeps its buttons; a click on a
// checkpoint of the lost future says where the run waits again.
func TestGoldenLostCheckpoint(t *testing.T) {
	waiting := sampleRun()
	waiting.Status, waiting.Waiting = pipeline.StatusWaiting, "run-42.cp-1"
	waiting.Checkpoints = []checkpoints.Instance{*planInstance()}
	golden(t, "checkpoint_plan_lost", msg(blockkit.RenderLostCheckpoint(planInstance(), "U123", planInstance().OfferedAt)))
	golden(t, "lost_checkpoint_click", msg(blockkit.RenderLostCheckpointClick(waiting)))
	golden(t, "lost_checkpoint_retired", msg(blockkit.RenderLostCheckpointRetired(waiting)))

	for name, inst := range map[string]*checkpoints.Instance{"plan": planInstance(), "sources": sourcesInstance(), "draft": draftInstance(), "all": allTypesInstance()} {
		blocks := blockkit.RenderLostCheckpoint(inst, "U123", inst.OfferedAt)
		out := string(rawJSON(blocks))
		if len(blocks) > blockkit.MaxBlocks {
			t.Errorf("%s: %d blocks, Slack takes %d", name, len(blocks), blockkit.MaxBlocks)
		}
		if !strings.Contains(out, "was lost when the bot's storage was restored") || !strings.Contains(out, `"`+blockkit.ActionApprove+`"`) {
			t.Errorf("%s: the lost checkpoint lacks its notice or its buttons:\n%s", name, out)
		}
	}
}
