package blockkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// The clarify checkpoint: the planner's clarifying questions before the
// plan, answered with Answer (the Edit modal, a field per question), by a
// mention in the thread, or passed over with Skip (the plan then rests on
// the assumptions shown). Questions, their whys and the assumptions are
// model output: escaped like every untrusted text.

// clarifyTitle is the header of a clarify message.
const clarifyTitle = "❓ Before I plan: a few questions"

// clarifyBody shows the question, the clarifying questions with why each
// matters, and what the plan assumes without answers.
func clarifyBody(p pipeline.ClarifyPayload) []slack.Block {
	blocks := []slack.Block{Section("*Question:* " + EscapeTruncate(OneLine(p.Question), 1500) +
		"\nIt can be read more than one way. Before I search anything:")}
	for i, q := range p.Questions {
		text := fmt.Sprintf("*%d. %s*", i+1, EscapeTruncate(OneLine(q.Question), 400))
		if q.Why != "" {
			text += "\n_Why I ask:_ " + EscapeTruncate(OneLine(q.Why), 400)
		}
		blocks = append(blocks, Section(text))
	}
	if len(p.Assumptions) > 0 {
		lines := make([]string, len(p.Assumptions))
		for i, a := range p.Assumptions {
			lines[i] = "• " + EscapeTruncate(OneLine(a), 300)
		}
		blocks = append(blocks, Section("*Without answers I assume:*\n"+strings.Join(lines, "\n")))
	}
	blocks = append(blocks, ContextText("*Answer* opens a form with a box per question. Or mention me in this thread with your answers, in one message. *Skip* plans on the assumptions above."))
	return blocks
}

// clarifyDeadlineNote says what happens when nobody answers in time.
func clarifyDeadlineNote(inst *checkpoints.Instance, now time.Time) string {
	if left, ok := checkpoints.TimeLeft(inst.DeadlineAt, now); ok {
		return " :hourglass: If nobody answers in " + left + " (" + SlackDate(inst.DeadlineAt) + "), I plan on the assumptions above."
	}
	return " :hourglass: If nobody answers by " + SlackDate(inst.DeadlineAt) + ", I plan on the assumptions above."
}

// clarifyPayloadOf reads the clarify payload of inst.
func clarifyPayloadOf(inst *checkpoints.Instance) (pipeline.ClarifyPayload, bool) {
	var p pipeline.ClarifyPayload
	return p, json.Unmarshal(inst.Payload, &p) == nil
}

// RenderClarifyAnswered acknowledges answers given by a mention in the
// thread: they are taken, and the run plans with them.
func RenderClarifyAnswered(by string) []slack.Block {
	return []slack.Block{
		Section(":speech_balloon: Thanks, " + Who(by) + ": I'll plan with your answers."),
		ContextText("The plan comes next in this thread, for your review."),
	}
}

// ClarifyAnsweredText is the notification text of RenderClarifyAnswered.
const ClarifyAnsweredText = "Thanks: I'll plan with your answers."

// assumptionsLine is a plan's assumptions in one line ("" for none).
func assumptionsLine(as []string) string {
	if len(as) == 0 {
		return ""
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = EscapeTruncate(OneLine(a), 300)
	}
	return "*Assumes:* " + strings.Join(parts, " · ")
}

// The clarify checkpoint's Answer form: its title, submit button and intro.
const (
	clarifyModalTitle  = "Your answers"
	clarifyModalSubmit = "Send answers"
	clarifyModalIntro  = "Answer what you can; a question left empty keeps the assumption the plan states."
)

// clarifyDecided is the collapsed record of a clarify checkpoint that was
// answered or skipped (by a person, or because nobody answered in time);
// nil for any other checkpoint or state.
func clarifyDecided(inst *checkpoints.Instance) []slack.Block {
	if inst.ControlType != checkpoints.Clarify {
		return nil
	}
	label := "*" + EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100) + "*"
	switch {
	case inst.Decision != nil && inst.Decision.Action == checkpoints.Edit:
		return []slack.Block{Section(fmt.Sprintf("%s — :speech_balloon: answered by %s on %s; I plan with the answers", label, Who(inst.Decision.By), SlackDate(inst.Decision.At)))}
	case inst.State == checkpoints.StateSkipped && len(inst.Audit) > 0:
		a := inst.Audit[len(inst.Audit)-1]
		switch {
		case a.Actor == "engine" && strings.HasSuffix(a.Note, "timed out"):
			return []slack.Block{Section(fmt.Sprintf("%s — :hourglass: nobody answered in time; I plan on the assumptions", label))}
		case a.Actor == "engine":
			return nil // not shown, or passed over by the engine: the generic record says why
		}
		return []slack.Block{Section(fmt.Sprintf("%s — :fast_forward: skipped by %s on %s; I plan on the assumptions", label, Who(a.Actor), SlackDate(a.At)))}
	}
	return nil
}
