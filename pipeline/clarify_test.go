package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// These tests drive runs whose planner finds the question ambiguous: its
// clarifying questions are asked at the clarify checkpoint before the plan
// review, and answered, skipped or left to time out.

var ambiguous = []pipeline.ClarifyingQuestion{
	{Question: "Air-source or ground-source heat pumps?", Why: "They behave differently in frost."},
	{Question: "Which country's climate?", Why: "Cold means -5 °C in one place and -30 °C in another."},
}

// clarifyFlow is a flow whose planner asks the ambiguous questions.
func clarifyFlow(t *testing.T) *flow {
	t.Helper()
	f, _ := newFlow(t, passes)
	f.model.clarify = ambiguous
	return f
}

// asked checks the clarify checkpoint the run waits at: one answer field
// per question, labelled with it, and the reply in one's own words; only
// Answer offered (Skip, as it is optional); a one-hour timeout.
func asked(t *testing.T, f *flow) checkpoints.Instance {
	t.Helper()
	inst := f.at(checkpoints.Clarify)
	var keys []string
	for _, fl := range inst.Fields {
		keys = append(keys, fl.Key)
	}
	if strings.Join(keys, ",") != "answer_1,answer_2,reply" || !strings.Contains(inst.Fields[0].Label, "Air-source or ground-source") ||
		!strings.Contains(inst.Fields[1].Help, "-30 °C") {
		t.Fatalf("clarify fields = %+v", inst.Fields)
	}
	if inst.Required || len(inst.Actions) != 1 || inst.Actions[0] != checkpoints.Edit || inst.Timeout != time.Hour {
		t.Fatalf("clarify required %v actions %v timeout %s", inst.Required, inst.Actions, inst.Timeout)
	}
	if got := pipeline.Choices(&inst)[checkpoints.Edit]; got != pipeline.ChoiceAnswer {
		t.Errorf("the edit button reads %q, want %q", got, pipeline.ChoiceAnswer)
	}
	var p pipeline.ClarifyPayload
	if err := json.Unmarshal(inst.Payload, &p); err != nil || len(p.Questions) != 2 || len(p.Assumptions) != 1 {
		t.Fatalf("clarify payload = %+v (%v)", p, err)
	}
	return inst
}

// planReviewNames checks that the plan review shows the assumptions.
func planReviewNames(t *testing.T, f *flow, assumption string) {
	t.Helper()
	inst := f.at(checkpoints.PlanReview)
	var p pipeline.PlanPayload
	if err := json.Unmarshal(inst.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Assumptions) != 1 || p.Assumptions[0] != assumption || p.Round != 1 {
		t.Fatalf("plan review assumptions %q round %d, want [%q] round 1", p.Assumptions, p.Round, assumption)
	}
}

func TestClarifyingQuestionsAnsweredPlanAgainWithTheAnswers(t *testing.T) {
	f := clarifyFlow(t)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	asked(t, f)
	if n := len(f.model.sent("research_plan")); n != 1 {
		t.Fatalf("%d plans before the answers, want 1", n)
	}
	f.decide(checkpoints.Clarify, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{
		checkpoints.KeyAnswer1: "Air-source", checkpoints.KeyReply: "We are in Finland.",
	}})
	plans := f.model.sent("research_plan")
	if len(plans) != 2 {
		t.Fatalf("%d planner calls, want 2 (the answers send the run back to the planner)", len(plans))
	}
	for _, want := range []string{"Answers to Your Clarifying Questions", "Question 1: Air-source or ground-source heat pumps?", "Answer: Air-source", "Answer: (none)", "We are in Finland."} {
		if !strings.Contains(plans[1], want) {
			t.Errorf("the plan after the answers lacks %q:\n%s", want, plans[1])
		}
	}
	if strings.Contains(plans[0], "Answers to Your Clarifying Questions") {
		t.Error("the first plan already carried answers")
	}
	// The planner asks again, but the questions are not asked twice.
	planReviewNames(t, f, "plan 2 assumes air-source heat pumps")
	f.approve(checkpoints.PlanReview)
	f.approve(checkpoints.DraftReview)
	r := f.finished(pipeline.StatusCompleted)
	c := r.Clarification
	if c == nil || !c.Answered() || c.AnsweredBy != "U1" || c.Answers[0] != "Air-source" || c.Reply != "We are in Finland." {
		t.Fatalf("clarification stored = %+v", c)
	}
	md := pipeline.RenderMarkdown(r.Report)
	for _, want := range []string{"- Before the plan:", "2 clarifying question(s) asked before the plan; answered by U1",
		"Asked: Air-source or ground-source heat pumps? — answer: Air-source", "Reply: We are in Finland.", "Assumed: plan 2 assumes air-source heat pumps"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Count(md, "Asked: ") != 2 {
		t.Errorf("the report lists the questions %d times, want each once", strings.Count(md, "Asked: "))
	}
}

func TestClarifyingQuestionsSkippedPlanOnTheStatedAssumptions(t *testing.T) {
	f := clarifyFlow(t)
	f.start(checkpoints.ModeFull, pipeline.Limits{}, false)
	inst := asked(t, f)
	if _, err := f.eng.Skip(context.Background(), inst.ID, "U1"); err != nil {
		t.Fatal(err)
	}
	f.advance()
	if n := len(f.model.sent("research_plan")); n != 1 {
		t.Fatalf("%d planner calls, want 1: a skip keeps the plan made on the assumptions", n)
	}
	planReviewNames(t, f, "plan 1 assumes air-source heat pumps")
	// A rejected plan is planned again; the questions are not asked again.
	f.decide(checkpoints.PlanReview, checkpoints.Decision{Action: checkpoints.Reject, Note: "Add noise."})
	f.at(checkpoints.PlanReview)
	r := f.run()
	if system, _ := pipeline.PlannerPrompt(r, t0); !strings.Contains(system, `Leave "clarifying_questions" empty`) {
		t.Error("the re-plan may still ask questions")
	}
	if got := r.ClarifyOutcome(); got != "2 clarifying question(s) asked before the plan; skipped by U1, so it planned on its assumptions" {
		t.Errorf("outcome %q", got)
	}
}

func TestClarifyingQuestionsAnsweredWithNothingAreASkip(t *testing.T) {
	f := clarifyFlow(t)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	asked(t, f)
	f.decide(checkpoints.Clarify, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{checkpoints.KeyAnswer1: "  "}})
	if n := len(f.model.sent("research_plan")); n != 1 {
		t.Fatalf("%d planner calls, want 1", n)
	}
	planReviewNames(t, f, "plan 1 assumes air-source heat pumps")
	if got := f.run().ClarifyOutcome(); !strings.Contains(got, "U1 answered none, so it planned on its assumptions") {
		t.Errorf("outcome %q", got)
	}
}

func TestClarifyingQuestionsTimedOutPlanOnTheStatedAssumptions(t *testing.T) {
	f := clarifyFlow(t)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	inst := asked(t, f)
	if !inst.DeadlineAt.Equal(f.clock.Now().Add(time.Hour)) {
		t.Fatalf("deadline %s, want in an hour", inst.DeadlineAt)
	}
	ctx := context.Background()
	f.clock.Advance(time.Hour)
	if err := f.eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	planReviewNames(t, f, "plan 1 assumes air-source heat pumps")
	r := f.run()
	if got := r.ClarifyOutcome(); got != "2 clarifying question(s) asked before the plan; nobody answered within 1 hour, so it planned on its assumptions" {
		t.Errorf("outcome %q", got)
	}
	if n := len(f.model.sent("research_plan")); n != 1 {
		t.Fatalf("%d planner calls, want 1", n)
	}
	f.approve(checkpoints.PlanReview)
	f.approve(checkpoints.DraftReview)
	md := pipeline.RenderMarkdown(f.finished(pipeline.StatusCompleted).Report)
	for _, want := range []string{"nobody answered within 1 hour", "Asked: Which country's climate?", "Assumed: plan 1 assumes air-source heat pumps"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}

func TestClarifyingQuestionsNeverAskedInAutoModeOrAStreamDigest(t *testing.T) {
	t.Run("auto", func(t *testing.T) {
		f := clarifyFlow(t)
		f.start(checkpoints.ModeAuto, pipeline.Limits{}, false)
		r := f.finished(pipeline.StatusCompleted)
		if r.Clarification != nil || len(r.Checkpoints) != 0 {
			t.Fatalf("auto run asked: %+v, %d checkpoints", r.Clarification, len(r.Checkpoints))
		}
		plans := f.model.sent("research_plan")
		if len(plans) != 1 {
			t.Fatalf("%d planner calls", len(plans))
		}
		// The plan still names its assumptions.
		md := pipeline.RenderMarkdown(r.Report)
		if !strings.Contains(md, "Assumed: plan 1 assumes air-source heat pumps") {
			t.Errorf("the auto report does not name the plan's assumptions")
		}
	})
	t.Run("stream digest", func(t *testing.T) {
		f := clarifyFlow(t)
		if _, err := f.eng.Start(context.Background(), pipeline.Request{
			Question: "Heat pump news", Mode: checkpoints.ModeGuided, RequestedBy: "U1",
			Origin: pipeline.Origin{Kind: "test", Queue: "runs", StreamID: "st-1"},
		}); err != nil {
			t.Fatal(err)
		}
		f.advance()
		f.at(checkpoints.PlanReview) // straight to the plan: no questions in a digest
		r := f.run()
		if r.Clarification != nil {
			t.Fatalf("a digest took questions: %+v", r.Clarification)
		}
		if system, _ := pipeline.PlannerPrompt(r, t0); !strings.Contains(system, `Leave "clarifying_questions" empty`) {
			t.Error("the digest's planner is invited to ask")
		}
	})
}

func TestClarifyingQuestionsNotAskedWhenTheCheckpointIsDisabled(t *testing.T) {
	f := clarifyFlow(t)
	var def checkpoints.Definition
	for _, d := range checkpoints.Builtins(t0) {
		if d.ID == checkpoints.Clarify {
			def = d
		}
	}
	def.Enabled = false
	f.define(def)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	planReviewNames(t, f, "plan 1 assumes air-source heat pumps")
	if got := f.run().ClarifyOutcome(); !strings.Contains(got, "not asked (the clarify checkpoint is disabled here)") {
		t.Errorf("outcome %q", got)
	}
}

func TestAClearQuestionGoesStraightToThePlan(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	f.at(checkpoints.PlanReview)
	if r := f.run(); r.Clarification != nil || len(r.Checkpoints) != 1 {
		t.Fatalf("a clear question was clarified: %+v", r.Clarification)
	}
}

// Questions whose message cannot be shown are not asked: the run plans on
// its assumptions, and the report says why they were not asked.
func TestClarifyingQuestionsThatCannotBeShownAreNotAsked(t *testing.T) {
	f := clarifyFlow(t)
	f.pres.offerErr = errors.New("channel_not_found")
	f.create(checkpoints.ModeGuided, pipeline.Limits{}, false)
	ctx := context.Background()
	for range 4 {
		if r := f.run(); r.Current() != nil && r.Current().DefinitionID == checkpoints.PlanReview {
			break
		}
		_ = f.eng.Advance(ctx, "r-1") // the offer fails; the optional checkpoint is given up
	}
	f.pres.offerErr = nil
	f.advance()
	planReviewNames(t, f, "plan 1 assumes air-source heat pumps")
	if got := f.run().ClarifyOutcome(); !strings.Contains(got, "not asked: could not be shown: channel_not_found; it planned on its assumptions") {
		t.Errorf("outcome %q", got)
	}
}
