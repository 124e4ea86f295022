package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestGoldenLostCheckpoint: a checkpoint offered again after its decision
// was lost says so under its header (with who decided what, when, if
// known, and when the loss was found) and keeps its buttons; its earlier
// message says the decision shown there was lost and points to the new
// one; a click on a checkpoint of the lost future says where the run
// waits again.
func TestGoldenLostCheckpoint(t *testing.T) {
	waiting := sampleRun()
	waiting.Status, waiting.Waiting = pipeline.StatusWaiting, "run-42.cp-1"
	waiting.Checkpoints = []checkpoints.Instance{*planInstance()}
	found := planInstance().OfferedAt.Add(2 * time.Hour)
	known := blockkit.LostDecision{FoundAt: found, By: "U123", Action: checkpoints.Approve, At: planInstance().OfferedAt.Add(time.Hour)}
	golden(t, "checkpoint_plan_lost", msg(blockkit.RenderLostCheckpoint(planInstance(), "U123", planInstance().OfferedAt, blockkit.LostDecision{FoundAt: found})))
	golden(t, "checkpoint_plan_lost_known", msg(blockkit.RenderLostCheckpoint(planInstance(), "U123", planInstance().OfferedAt, known)))
	golden(t, "lost_decision_retired", msg(blockkit.RenderLostDecisionRetired(planInstance(), known, "https://example.slack.com/archives/C1/p1700000000000200")))
	golden(t, "lost_decision_retired_nolink", msg(blockkit.RenderLostDecisionRetired(planInstance(), blockkit.LostDecision{FoundAt: found}, "")))
	golden(t, "lost_checkpoint_click", msg(blockkit.RenderLostCheckpointClick(waiting)))
	golden(t, "lost_checkpoint_retired", msg(blockkit.RenderLostCheckpointRetired(waiting)))

	for name, inst := range map[string]*checkpoints.Instance{"plan": planInstance(), "sources": sourcesInstance(), "draft": draftInstance(), "all": allTypesInstance()} {
		blocks := blockkit.RenderLostCheckpoint(inst, "U123", inst.OfferedAt, known)
		out := string(rawJSON(blocks))
		if len(blocks) > blockkit.MaxBlocks {
			t.Errorf("%s: %d blocks, Slack takes %d", name, len(blocks), blockkit.MaxBlocks)
		}
		if !strings.Contains(out, "was lost when the bot's storage was restored") || !strings.Contains(out, "The lost decision: approved by") || !strings.Contains(out, `"`+blockkit.ActionApprove+`"`) {
			t.Errorf("%s: the lost checkpoint lacks its notice or its buttons:\n%s", name, out)
		}
	}
}
