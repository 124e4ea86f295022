package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/researchbot/researchbot/checkpoints"
)

// At most three questions are taken, each clipped, blank ones dropped;
// the fields are labelled with them; a run in auto mode, a digest, or a
// run that asked before takes none, but always keeps the assumptions.
func TestClarificationIsBounded(t *testing.T) {
	out := PlanOutput{
		Assumptions: []string{"a1", "", "a2", "a3", "a4", "a5", "a6"},
		ClarifyingQuestions: []ClarifyingQuestion{
			{Question: "  "}, {Question: "One?\nreally", Why: "w1"}, {Question: strings.Repeat("x", 2000)}, {Question: "Three?"}, {Question: "Four?"},
		},
	}
	r := fixtureRun()
	r.Mode = checkpoints.ModeGuided
	r.Clarification = nil
	r.takeClarification(out, fixtureNow())
	c := r.Clarification
	if c == nil || len(c.Questions) != 3 || c.Questions[0].Question != "One? really" || c.Questions[2].Question != "Three?" {
		t.Fatalf("questions %+v", c)
	}
	if n := utf8.RuneCountInString(c.Questions[1].Question); n > maxClarifyRunes+20 || !strings.HasSuffix(c.Questions[1].Question, truncationMark) {
		t.Errorf("a question of %d runes was kept", n)
	}
	if len(r.Plan.Assumptions) != maxAssumptions || r.Plan.Assumptions[1] != "a2" {
		t.Errorf("assumptions %q", r.Plan.Assumptions)
	}
	var def checkpoints.Definition
	for _, d := range checkpoints.Builtins(fixtureNow()) {
		if d.ID == checkpoints.Clarify {
			def = d
		}
	}
	fs := r.clarifyFields(cloneFields(def.Fields))
	if len(fs) != 4 || fs[0].Label != "1. One? really" || fs[0].Help != "Why I ask: w1" || fs[3].Key != checkpoints.KeyReply {
		t.Errorf("fields %+v", fs)
	}
	for name, mutate := range map[string]func(*Run){
		"auto":         func(r *Run) { r.Mode = checkpoints.ModeAuto },
		"digest":       func(r *Run) { r.Origin.StreamID = "st-1" },
		"asked before": func(r *Run) { r.Clarification = &Clarification{Questions: []ClarifyingQuestion{{Question: "Old?"}}} },
	} {
		r := fixtureRun()
		r.Mode, r.Clarification = checkpoints.ModeGuided, nil
		mutate(r)
		before := r.Clarification
		r.takeClarification(out, fixtureNow())
		if r.Clarification != before || len(r.Plan.Assumptions) == 0 {
			t.Errorf("%s: clarification %+v, assumptions %q", name, r.Clarification, r.Plan.Assumptions)
		}
	}
}
