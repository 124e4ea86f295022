package terminal

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// clarifyInstance is the clarify checkpoint with two questions, its
// fields labelled with them as the engine makes it.
func clarifyInstance(t *testing.T) checkpoints.Instance {
	t.Helper()
	p := pipeline.ClarifyPayload{
		Question: "What about Rust?",
		Questions: []pipeline.ClarifyingQuestion{
			{Question: "The programming language, the video game or corrosion?", Why: "Each needs different sources."},
			{Question: "For adopting it at work, or for learning it?"},
		},
		Assumptions: []string{"Rust the programming language", "adoption at work"},
	}
	inst := instance(t, checkpoints.Clarify, p, nil)
	var fields []checkpoints.Field
	for _, f := range inst.Fields {
		switch f.Key {
		case checkpoints.KeyAnswer1:
			f.Label, f.Help = "1. "+p.Questions[0].Question, "Why I ask: "+p.Questions[0].Why
		case checkpoints.KeyAnswer2:
			f.Label = "2. " + p.Questions[1].Question
		case checkpoints.KeyAnswer3:
			continue
		}
		fields = append(fields, f)
	}
	inst.Fields = fields
	return inst
}

// The clarify checkpoint shows the questions, why, the assumptions and
// what each answer does (golden); the plan names its assumptions.
func TestRenderClarifyGolden(t *testing.T) {
	golden(t, "checkpoint_clarify", RenderCheckpoint(clarifyInstance(t)))
	plan := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{Question: "What about Rust?", SubQuestions: []string{"Adoption?"}, Assumptions: []string{"Rust the programming language"}}, nil)
	if got := RenderCheckpoint(plan); !strings.Contains(got, "Assumes: Rust the programming language\n") {
		t.Errorf("the plan does not name its assumptions:\n%s", got)
	}
}

// Answered at the prompt: [a]nswer asks each question in turn (the second
// left empty), then the reply in one's own words; the answers pass the
// checkpoint's own validation. Nonsense is answered with the choices, and
// [s]kip skips.
func TestPromptAnswersTheClarifyingQuestions(t *testing.T) {
	inst := clarifyInstance(t)
	var out bytes.Buffer
	in := "approve\na\nThe programming language\n.\n.\nWe write firmware\nfor heat pumps\n.\n"
	d, err := NewPrompter(strings.NewReader(in), &out).Ask(context.Background(), inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[a]nswer / [s]kip? ", "Please answer [a]nswer / [s]kip.", "Answer each question", "1. The programming language, the video game or corrosion? — Why I ask: Each needs different sources."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the prompt lacks %q:\n%s", want, out.String())
		}
	}
	want := map[string]any{checkpoints.KeyAnswer1: "The programming language", checkpoints.KeyReply: "We write firmware\nfor heat pumps"}
	if d.Action != checkpoints.Edit || len(d.Values) != 2 || d.Values[checkpoints.KeyAnswer1] != want[checkpoints.KeyAnswer1] || d.Values[checkpoints.KeyReply] != want[checkpoints.KeyReply] {
		t.Fatalf("decision %+v, want edit with %v", d, want)
	}
	if err := inst.Decide(checkpoints.Decision{Action: d.Action, Values: d.Values, By: "terminal", At: now}); err != nil {
		t.Fatalf("the answers are not valid: %v", err)
	}
	if _, err := NewPrompter(strings.NewReader("s\n"), &out).Ask(context.Background(), clarifyInstance(t), nil); !errors.Is(err, ErrSkip) {
		t.Fatalf("skip: %v", err)
	}
}
