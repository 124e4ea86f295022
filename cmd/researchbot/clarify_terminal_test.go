package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// TestClarifyingQuestionsAnsweredAtTheTerminal: a guided terminal run whose
// planner finds the question ambiguous shows its clarifying question
// before any plan; the answer typed at the prompt sends it back to the
// planner with the answer, then the plan (naming its assumptions) and the
// draft are approved, and the report says what was asked and answered.
func TestClarifyingQuestionsAnsweredAtTheTerminal(t *testing.T) {
	res := &researchtest.Researcher{
		ClarifyingQuestions: []pipeline.ClarifyingQuestion{{Question: "Air-source or ground-source heat pumps?", Why: "They behave differently in frost."}},
		Assumptions:         []string{"air-source heat pumps"},
	}
	w := newWorld(t, res)
	ctx := context.Background()
	var out, errb bytes.Buffer
	here := assemble(t, w.env(nil), app.Options{Presenters: map[string]pipeline.Presenter{"terminal": terminal.New(&errb)}})
	stop, err := here.StartWorker([]string{"terminal-clarify"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r, err := here.Engine.Start(ctx, pipeline.Request{Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided,
		RequestedBy: "terminal", Origin: pipeline.Origin{Kind: "terminal", Queue: "terminal-clarify"}})
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	pr := terminal.NewPrompter(strings.NewReader("a\nGround-source, in Finland\n.\na\na\n"), &errb)
	if err := follow(fctx, here.Engine, here.Store.Watch(fctx, r.ID, 0), terminal.NewFollower(&errb, nil), pr, nil, r.ID, true, "", terminal.Style{}, &out, &errb); err != nil {
		t.Fatalf("follow: %v\n%s", err, errb.String())
	}
	shown := errb.String()
	for _, want := range []string{"━━ Clarifying questions", "1. Air-source or ground-source heat pumps?", "[a]nswer / [s]kip? ", "✓ Clarifying questions: chose “Answer”",
		"━━ Research plan", "Assumes: air-source heat pumps", "━━ Draft review", "completed after"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, shown)
		}
	}
	if strings.Index(shown, "━━ Clarifying questions") > strings.Index(shown, "━━ Research plan") {
		t.Error("the plan was shown before the questions")
	}
	if n := res.Count("research_plan"); n != 2 {
		t.Errorf("%d planner calls, want 2 (the answer sends the run back to the planner)", n)
	}
	for _, want := range []string{"answered by terminal", "Asked: Air-source or ground-source heat pumps? — answer: Ground-source, in Finland"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
