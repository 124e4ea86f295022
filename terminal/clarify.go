package terminal

import (
	"fmt"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// The clarify checkpoint at the terminal: the planner's questions before
// the plan, each with why it matters, and what the plan assumes without
// answers. [a]nswer asks each question in turn (an empty answer keeps the
// assumption); [s]kip plans on the assumptions, as its timeout does.

// clarifyChoices is the prompt of the clarify checkpoint.
const clarifyChoices = "[a]nswer / [s]kip"

// renderClarify shows the clarifying questions and the assumptions.
func renderClarify(b *strings.Builder, inst checkpoints.Instance, p pipeline.ClarifyPayload) {
	fmt.Fprintf(b, "Question: %s\nIt can be read more than one way. Before anything is searched:\n", p.Question)
	for i, q := range p.Questions {
		fmt.Fprintf(b, "  %d. %s\n", i+1, q.Question)
		if q.Why != "" {
			fmt.Fprintf(b, "     why: %s\n", q.Why)
		}
	}
	if len(p.Assumptions) > 0 {
		b.WriteString("Without answers the plan assumes:\n")
		for _, a := range p.Assumptions {
			fmt.Fprintf(b, "  - %s\n", a)
		}
	}
	b.WriteString("[a]nswer: answer the questions, one by one (an empty answer keeps the assumption) · [s]kip: plan on the assumptions")
	if inst.Timeout > 0 {
		fmt.Fprintf(b, ", which is also what happens if nobody answers within %s", waitText(inst.Timeout))
	}
	b.WriteString("\n")
}

// parseClarifyAction reads an answer to the clarify prompt: "a" or
// "answer" is Edit (the questions are then asked one by one).
func parseClarifyAction(s string) (checkpoints.Action, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "a", "answer", "e", "edit":
		return checkpoints.Edit, true
	}
	return "", false
}

// waitText says a wait in words: "1 hour", "90 minutes".
func waitText(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d minutes", int(d.Round(time.Minute)/time.Minute))
}
