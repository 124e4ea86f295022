package blockkit

import (
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// LostDecisionNotice heads a checkpoint offered again because the run's
// stored state went back in time (pipeline.Run.LostDecision).
const LostDecisionNotice = ":warning: An earlier decision on this checkpoint was lost when the bot's storage was restored, so it must be made again."

// LostDecision is what is known of a decision lost with the store's
// writes, for the messages that say so: when the loss was found (always
// known) and the decision that was lost (known when the bot remembered
// it: By is "" otherwise).
type LostDecision struct {
	// FoundAt is when the loss was found (pipeline.LostDecision.At).
	FoundAt time.Time
	// By, Action and At describe the lost decision; By is "" when unknown.
	By     string
	Action checkpoints.Action
	At     time.Time
}

// lostDecisionLine says what was lost, and who decided it when, when known.
func lostDecisionLine(lost LostDecision) string {
	var what string
	if lost.By != "" {
		verb := map[checkpoints.Action]string{
			checkpoints.Approve: "approved", checkpoints.Edit: "edited and approved", checkpoints.Reject: "rejected",
		}[lost.Action]
		if verb == "" {
			verb = "decided (" + Escape(string(lost.Action)) + ")"
		}
		what = "The lost decision: " + verb + " by " + Who(lost.By)
		if !lost.At.IsZero() {
			what += " on " + SlackDate(lost.At)
		}
		what += "."
	}
	if !lost.FoundAt.IsZero() {
		if what != "" {
			what += " "
		}
		what += "The loss was found on " + SlackDate(lost.FoundAt) + "."
	}
	return what
}

// RenderLostCheckpoint is RenderCheckpointAt for a checkpoint offered again
// after its decision was lost, posted as a new message at the bottom of
// its thread: the same message with live buttons, and under the header
// LostDecisionNotice and what is known of the lost decision (within
// Slack's block limit).
func RenderLostCheckpoint(inst *checkpoints.Instance, requestedBy string, now time.Time, lost LostDecision) []slack.Block {
	blocks := RenderCheckpointAt(inst, requestedBy, now)
	notice := LostDecisionNotice
	if line := lostDecisionLine(lost); line != "" {
		notice += "\n" + line
	}
	blocks = slices.Insert(blocks, 1, slack.Block(ContextText(notice)))
	if len(blocks) > MaxBlocks {
		// Give up the last block of the body, not the buttons.
		cut := len(blocks) - len(neverDomainBlocks(inst)) - len(checkpointTail(inst, requestedBy, now)) - 1
		blocks = slices.Delete(blocks, cut, cut+1)
	}
	return blocks
}

// RenderLostDecisionRetired replaces the earlier message of checkpoint
// inst (which shows a decision the store then lost, without buttons) when
// the checkpoint is asked again in a new message: the decision shown there
// no longer holds, and where to decide now (link is the new message's
// permalink; "" says "the newest message of this thread").
func RenderLostDecisionRetired(inst *checkpoints.Instance, lost LostDecision, link string) []slack.Block {
	label := EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100)
	where := "in the newest message of this thread"
	if link != "" {
		where = fmt.Sprintf("<%s|in a new message below>", link)
	}
	text := fmt.Sprintf(":warning: *%s* — the decision made here was lost when the bot's storage was restored; it does not apply. This checkpoint is asked again %s: decide there.", label, where)
	if line := lostDecisionLine(lost); line != "" {
		text += "\n" + line
	}
	return []slack.Block{Section(text)}
}

// RenderLostCheckpointClick answers a click on a button of a checkpoint the
// run no longer has because the store lost it (pipeline.ErrCheckpointLost):
// what happened, where the run waits again, and that nothing was changed.
func RenderLostCheckpointClick(r *pipeline.Run) []slack.Block {
	where := "its latest checkpoint"
	if inst := r.Current(); inst != nil {
		where = "*" + EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100) + "*"
	}
	return RenderError("This checkpoint was lost when the bot's storage was restored: run "+RunRef(r.ID)+" is waiting at "+where+" again. Decide there (the newest message in the thread asks for it).",
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
	return []slack.Block{ContextText(":warning: This checkpoint was lost when the bot's storage was restored; nothing was decided here. Run " + RunRef(r.ID) + " is waiting at " + where + " again: decide in the newest message of this thread.")}
}

// HomeLostNote is the App Home's warning beside a pending checkpoint that
// is asked again because an earlier decision on it was lost.
func HomeLostNote(r *pipeline.Run) string {
	note := ":warning: An earlier decision on it was lost when the bot's storage was restored; it must be made again."
	if r.LostDecision != nil && !r.LostDecision.At.IsZero() {
		note += " (Found on " + SlackDate(r.LostDecision.At) + ".)"
	}
	return note
}
