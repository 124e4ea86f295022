package blockkit

import (
	"fmt"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// Steering a running research from its thread: the acknowledgement of a
// note, the refusals, and the note's line in the progress message.

// RenderSteeringNoted acknowledges a steering note in the run's thread:
// who gave it, the note, and when it applies (from the next step, or once
// the checkpoint the run waits on is decided).
func RenderSteeringNoted(n pipeline.SteeringNote, count int, waiting bool) []slack.Block {
	when := "applies from the next step"
	if waiting {
		when = "applies from the next step, once the checkpoint above is decided"
	}
	return []slack.Block{
		Section(":pushpin: Noted: " + EscapeTruncate(OneLine(n.Text), pipeline.MaxSteeringNoteRunes) + " — " + when + "."),
		ContextText(fmt.Sprintf("Steering note %d of at most %d, from %s. Mention me with *stop* to cancel the run instead.", count, pipeline.MaxSteeringNotes, Who(n.By))),
	}
}

// SteeringNotedText is the notification text of the acknowledgement.
func SteeringNotedText(n pipeline.SteeringNote) string {
	return "Noted: " + CutRunes(OneLine(n.Text), 150)
}

// SteeringNotAllowed tells a person who may not steer the run who may.
func SteeringNotAllowed(r *pipeline.Run) []slack.Block {
	return RenderError("Only "+Who(r.RequestedBy)+", who started this research, and this channel's approvers can steer it while it runs.",
		"Your message was not passed on. Once the report is posted, mention me in this thread to ask about it.")
}

// SteeringTooLong refuses a note longer than pipeline.MaxSteeringNoteRunes.
func SteeringTooLong(runes int) []slack.Block {
	return RenderError(fmt.Sprintf("That note is %s characters long; a steering note takes at most %s.", Count(runes), Count(pipeline.MaxSteeringNoteRunes)),
		"Nothing was recorded. Say what the research should focus on, include or leave out in a sentence or two.")
}

// SteeringTooMany refuses a note past pipeline.MaxSteeringNotes.
func SteeringTooMany() []slack.Block {
	return RenderError(fmt.Sprintf("This run already has %d steering notes, as many as it takes.", pipeline.MaxSteeringNotes),
		"Nothing was recorded. To change course entirely, mention me with *stop* and start a new research.")
}

// SteeringTooFast refuses a note over the per-run rate and says when to
// send it again.
func SteeringTooFast(rate int, period string, wait string) []slack.Block {
	return RenderError(fmt.Sprintf("This run takes at most %d steering notes per %s.", rate, period),
		"Nothing was recorded. Send it again in "+wait+".")
}

// SteeringEmpty asks for the note after the mention.
func SteeringEmpty() []slack.Block {
	return RenderError("This research is still running: tell me after the mention how to steer it.",
		"For example: _@researchbot focus on Europe_ — or _@researchbot stop_ to cancel it.")
}

// SteeringFinished says the run ended before the note could be recorded.
func SteeringFinished(r *pipeline.Run) []slack.Block {
	return RenderError("Run "+RunRef(r.ID)+" finished before your note could be recorded; nothing was changed.",
		"Mention me again in this thread to ask about its report.")
}

// steeringLine is the progress message's line about the run's notes, or "".
func steeringLine(r *pipeline.Run) string {
	n := len(r.Notes)
	if n == 0 {
		return ""
	}
	last := r.Notes[n-1]
	return fmt.Sprintf(":pushpin: Steering notes *%d* · latest from %s: “%s”", n, Who(last.By), EscapeTruncate(OneLine(last.Text), 150))
}
