package blockkit

import (
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// LostDecisionNotice heads a checkpoint offered again because the run's
// stored state went back in time (pipeline.Run.LostDecision).
const LostDecisionNotice = ":warning: An earlier decision on this checkpoint was lost when the bot's storage was restored; please decide again."

// RenderLostCheckpoint is RenderCheckpointAt for a checkpoint offered again
// after its decision was lost: the same message, its buttons live again,
// with LostDecisionNotice under the header (within Slack's block limit).
func RenderLostCheckpoint(inst *checkpoints.Instance, requestedBy string, now time.Time) []slack.Block {
	blocks := RenderCheckpointAt(inst, requestedBy, now)
	blocks = slices.Insert(blocks, 1, slack.Block(ContextText(LostDecisionNotice)))
	if len(blocks) > MaxBlocks {
		// Give up the last block of the body, not the buttons.
		cut := len(blocks) - len(neverDomainBlocks(inst)) - len(checkpointTail(inst, requestedBy, now)) - 1
		blocks = slices.Delete(blocks, cut, cut+1)
	}
	return blocks
}

// RenderLostCheckpointClick answers a click on a button of a checkpoint the
// run no longer has because the store lost it (pipeline.ErrCheckpointLost):
// what happened, where the run waits again, and that nothing was changed.
func RenderLostCheckpointClick(r *pipeline.Run) []slack.Block {
	where := "its latest checkpoint"
	if inst := r.Current(); inst != nil {
		where = "*" + EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100) + "*"
	}
	return RenderError("This checkpoint was lost when the bot's storage was restored: run "+RunRef(r.ID)+" is waiting at "+where+" again. Decide there (the message in the thread says so).",
		"Nothing was changed by this click.")
}

// RenderLostCheckpointRetired replaces the message of a checkpoint the run
// lost (clicked after the store went back in time): one line saying so and
// where the run waits again, with no buttons.
func RenderLostCheckpointRetired(r *pipeline.Run) []slack.Block {
	where := "an earlier checkpoint"
	if inst := r.Current(); inst != nil {
		where = "*" + EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100) + "*"
	}
	return []slack.Block{ContextText(":warning: This checkpoint was lost when the bot's storage was restored; nothing was decided here. Run " + RunRef(r.ID) + " is waiting at " + where + " again: decide there.")}
}
