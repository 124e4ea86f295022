package terminal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/goldentest"
	"github.com/researchbot/researchbot/pipeline"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name.golden (or rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldentest.Compare(t, filepath.Join("testdata", name+".golden"), []byte(got), *update)
}

var now = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func instance(t *testing.T, id string, payload any, values map[string]any) checkpoints.Instance {
	t.Helper()
	var def checkpoints.Definition
	for _, d := range checkpoints.Builtins(now) {
		if d.ID == id {
			def = d
		}
	}
	raw, _ := json.Marshal(payload)
	fields := def.Fields
	if id == checkpoints.SourceReview {
		fields = append([]checkpoints.Field(nil), def.Fields...)
		for i := range fields {
			if fields[i].Type == checkpoints.FieldMultiSelect {
				fields[i].Options = []checkpoints.Option{{Value: "1", Label: "1. COP study"}, {Value: "2", Label: "2. Costs"}}
			}
		}
	}
	inst := checkpoints.NewInstance(def, "r-1.abc", "r-1", raw, fields, values, now)
	if err := inst.Offer(now, "engine"); err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestRenderCheckpointGolden(t *testing.T) {
	plan := pipeline.PlanPayload{
		Question: "How do heat pumps do in the cold?", SubQuestions: []string{"Efficiency?", "Cost?"},
		Queries:  []pipeline.QueryView{{Text: "heat pump COP cold", Kind: "academic"}, {Text: "heat pump prices", Kind: "web"}},
		Sections: []string{"Performance", "Cost"}, Methodology: "Field trials first.", Warnings: []string{"Few 2026 sources"},
		Estimate: pipeline.Estimate{CostUSD: 0.042, Duration: 3*time.Minute + 20*time.Second, Searches: 2, PagesToRead: 12, LLMCalls: 7},
	}
	sources := pipeline.SourcesPayload{Total: 9, ToFetch: 1, Sources: []pipeline.SourceView{
		{ID: 1, Title: "COP study", Domain: "example.org", Published: now, Gist: "Field data from 40 homes.", Selected: true},
		{ID: 2, Title: "Costs", Domain: "news.example.com"},
	}, Errors: []string{"arxiv: rate limited"}}
	draft := pipeline.DraftPayload{Markdown: "# Heat pumps in the cold\n\nThey work [1].\n", Version: 2, Title: "Heat pumps in the cold", Abstract: "They work.", Sections: []string{"Performance", "Cost"}, WordCount: 840, Sources: 7, Score: 8.2, Recommendation: "approve", Summary: "Solid.", Major: 1, Minor: 2,
		Claims: pipeline.ClaimSummary{Checked: true, ClaimTally: pipeline.ClaimTally{Total: 9, Verified: 8, Unsupported: 1}, Unsupported: []pipeline.ClaimView{
			{Location: "Cost", Sentence: "Prices halved in 2025 [2].", SourceID: 2, Source: "Costs", Quote: "prices fell by half", Reason: "the quote is too short to check (fewer than 5 words)"}}},
		Diff: &pipeline.DraftDiff{From: 1, To: 2, Changed: []pipeline.SectionChange{{Title: "Cost", Share: 0.7, Rewritten: true}}, ClaimsDropped: []string{"Heat pumps cut bills by 90 percent [1]."}, UnsupportedFixed: 1,
			Addressed: []pipeline.RevisionItem{{N: 1, By: "reviewer", Severity: "major", Text: "Unsupported claim."}}},
		Disagreements: []pipeline.DisagreementView{{N: 1, Topic: "COP at -15 °C", A: pipeline.SideView{Claim: "2.8 in field trials", Sources: []pipeline.SourceRef{{ID: 1, Title: "COP study"}}},
			B: pipeline.SideView{Claim: "1.75 is the certification floor", Sources: []pipeline.SourceRef{{ID: 2, Title: "Costs"}}}, Assessment: "Different measures.", Chosen: pipeline.ReadingA}},
		Coverage: []pipeline.Coverage{{Question: "Efficiency?", Status: pipeline.CoverageAnswered, Sources: []int{1}}, {Question: "Cost?", Status: pipeline.CoverageUnanswered}},
	}
	critical := pipeline.CriticalPayload{Version: 1, Title: "Heat pumps", Score: 5.5, Items: []pipeline.CritiqueItem{{Severity: "critical", Category: "accuracy", Description: "A figure is wrong.", SuggestedFix: "Use 2.8."}}}
	for name, inst := range map[string]checkpoints.Instance{
		"plan":     instance(t, checkpoints.PlanReview, plan, nil),
		"sources":  instance(t, checkpoints.SourceReview, sources, nil),
		"draft":    instance(t, checkpoints.DraftReview, draft, nil),
		"critical": instance(t, checkpoints.CriticalIssues, critical, nil),
		"draft_not_passed": instance(t, checkpoints.DraftReview, pipeline.DraftPayload{Version: 1, Title: "Heat pumps", Score: 3.2, Recommendation: "reject", NotPassed: true,
			Summary: "Off topic.", Claims: pipeline.ClaimSummary{Checked: true, ClaimTally: pipeline.ClaimTally{Total: 2, Verified: 1, Unsupported: 1},
				Unsupported: []pipeline.ClaimView{{Location: "Cost", Sentence: "Prices halved in 2025.", SourceID: 2, Source: "Costs", Reason: "no supporting quote was given"}}}}, nil),
	} {
		golden(t, "checkpoint_"+name, RenderCheckpoint(inst))
	}
	reminder := instance(t, checkpoints.PlanReview, plan, nil)
	reminder.Attempt = 2
	if !strings.Contains(RenderCheckpoint(reminder), "reminder") {
		t.Error("a re-offered checkpoint must say it is a reminder")
	}
}

func TestPromptApproveRejectAndRetryOnNonsense(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, nil)
	var out bytes.Buffer
	p := NewPrompter(strings.NewReader("maybe\nr\nToo broad; focus on Norway\n"), &out)
	d, err := p.Ask(context.Background(), inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != checkpoints.Reject || d.Note != "Too broad; focus on Norway" || d.By != "terminal" {
		t.Fatalf("decision %+v", d)
	}
	if !strings.Contains(out.String(), "Please answer [a]pprove / [e]dit / [r]eject") {
		t.Errorf("nonsense was not answered with the choices:\n%s", out.String())
	}
	d, err = NewPrompter(strings.NewReader("approve\n"), &out).Ask(context.Background(), inst, nil)
	if err != nil || d.Action != checkpoints.Approve {
		t.Fatalf("approve: %+v %v", d, err)
	}
}

func TestPromptEditFieldByField(t *testing.T) {
	inst := instance(t, checkpoints.SourceReview, pipeline.SourcesPayload{}, map[string]any{"relevant": []string{"1"}})
	// relevant: keep (Enter); exclude: option 2; feedback: two lines.
	in := "e\n\n2\nLook for utility reports\nand grid studies\n.\n"
	var out bytes.Buffer
	d, err := NewPrompter(strings.NewReader(in), &out).Ask(context.Background(), inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Action != checkpoints.Edit {
		t.Fatalf("action %s", d.Action)
	}
	if _, ok := d.Values["relevant"]; ok {
		t.Errorf("an empty answer must keep the field, got %v", d.Values["relevant"])
	}
	if got, _ := d.Values["exclude"].([]string); len(got) != 1 || got[0] != "2" {
		t.Errorf("exclude = %v, want [2]", d.Values["exclude"])
	}
	if d.Values["feedback"] != "Look for utility reports\nand grid studies" {
		t.Errorf("feedback = %q", d.Values["feedback"])
	}
	// What the prompter collected passes the checkpoint's own validation.
	if err := inst.Decide(checkpoints.Decision{Action: d.Action, Values: d.Values, By: "terminal", At: now}); err != nil {
		t.Fatalf("the edit is not valid: %v", err)
	}
}

func TestPromptShowsFieldErrorsAndEndsOnEOF(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, nil)
	var out bytes.Buffer
	_, err := NewPrompter(strings.NewReader(""), &out).Ask(context.Background(), inst, []checkpoints.FieldError{{Key: "depth", Message: "Pick one of the options"}})
	if !errors.Is(err, ErrNoInput) {
		t.Fatalf("err = %v, want ErrNoInput", err)
	}
	if !strings.Contains(out.String(), "Depth (depth): Pick one of the options") {
		t.Errorf("field errors not shown:\n%s", out.String())
	}
}

func TestPromptEditInEditor(t *testing.T) {
	script := filepath.Join(t.TempDir(), "editor.sh")
	// An "editor" that rewrites the depth in the YAML form it is given.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/^depth: standard$/depth: quick/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	inst := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, map[string]any{"depth": "standard", "sub_questions": "a\nb", "queries": "web: x"})
	p := NewPrompter(strings.NewReader("e\n"), &bytes.Buffer{})
	p.Editor = script
	d, err := p.Ask(context.Background(), inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Values["depth"] != "quick" || d.Values["queries"] != "web: x" {
		t.Fatalf("values from the editor: %v", d.Values)
	}
}

func TestFollowerShowsWhatTheStoreSaysAndAsksOncePerOffer(t *testing.T) {
	var out bytes.Buffer
	clock := quartz.NewMock(t)
	clock.Set(now)
	f := NewFollower(&out, clock)
	r := &pipeline.Run{ID: "r-1", Status: pipeline.StatusRunning, Step: pipeline.StepSearch, CreatedAt: now}
	if f.Observe(r) != nil {
		t.Fatal("asked with no checkpoint")
	}
	f.Observe(r) // same stage, too soon: coalesced
	clock.Advance(3 * time.Second)
	f.Observe(r)
	r.Step = pipeline.StepFetch
	f.Observe(r) // new stage: shown at once
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("%d progress lines, want 3:\n%s", n, out.String())
	}
	inst := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, map[string]any{"sub_questions": "a", "queries": "web: x"})
	inst.MaxRetries = 3
	r.Checkpoints, r.Waiting, r.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	if got := f.Observe(r); got == nil || got.ID != inst.ID {
		t.Fatalf("not asked about the offered checkpoint: %v", got)
	}
	if f.Observe(r) != nil {
		t.Fatal("asked twice about one offer")
	}
	// A reminder (offered again after a timeout) is asked again.
	later := now.Add(inst.Timeout + time.Hour)
	if err := r.Checkpoints[0].TimeOut(later); err != nil {
		t.Fatal(err)
	}
	if err := r.Checkpoints[0].Offer(later, "engine"); err != nil {
		t.Fatal(err)
	}
	if f.Observe(r) == nil {
		t.Fatal("a reminder was not asked")
	}
	// Decided by whoever: one line records it.
	out.Reset()
	_ = r.Checkpoints[0].Decide(checkpoints.Decision{Action: checkpoints.Approve, By: "terminal", At: now})
	r.Waiting, r.Status = "", pipeline.StatusRunning
	f.Observe(r)
	f.Observe(r)
	if n := strings.Count(out.String(), "✓ "); n != 1 {
		t.Errorf("%d decision lines, want 1:\n%s", n, out.String())
	}
}

// TestFollowerWarnsWhenALostDecisionIsAskedAgain: the plan was answered;
// then the store went back in time and the run asks for the plan again
// (pipeline.Run.LostDecision). The terminal prints one warning line and
// asks again; the same loss marked again while it is asked changes
// nothing; once decided again, a later loss is warned of and asked again.
func TestFollowerWarnsWhenALostDecisionIsAskedAgain(t *testing.T) {
	var out bytes.Buffer
	clock := quartz.NewMock(t)
	clock.Set(now)
	f := NewFollower(&out, clock)
	inst := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, map[string]any{"sub_questions": "a", "queries": "web: x"})
	r := &pipeline.Run{ID: "r-1", Status: pipeline.StatusWaiting, Step: pipeline.StepPlan, CreatedAt: now,
		Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID}
	if got := f.Observe(r); got == nil || got.ID != inst.ID {
		t.Fatalf("not asked about the plan: %v", got)
	}
	decided := *r
	decided.Checkpoints = []checkpoints.Instance{inst}
	if err := decided.Checkpoints[0].Decide(checkpoints.Decision{Action: checkpoints.Approve, By: "terminal", At: now}); err != nil {
		t.Fatal(err)
	}
	decided.Waiting, decided.Status, decided.Step = "", pipeline.StatusRunning, pipeline.StepSearch
	f.Observe(&decided)

	// The store went back: the plan is open again; before the loss is
	// marked nothing is asked, after it the warning comes once.
	back := *r
	if f.Observe(&back) != nil {
		t.Fatal("asked again before the loss was marked")
	}
	out.Reset()
	back.LostDecision = &pipeline.LostDecision{Checkpoint: inst.ID, At: now.Add(time.Minute), Evidence: "a version lower than one seen"}
	if got := f.Observe(&back); got == nil || got.ID != inst.ID {
		t.Fatalf("the plan whose decision was lost was not asked again: %v\n%s", got, out.String())
	}
	if n := strings.Count(out.String(), "⚠ An earlier decision on \"Research plan\" was lost when the run's storage was restored (found at "); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, out.String())
	}
	remarked := back
	remarked.LostDecision = &pipeline.LostDecision{Checkpoint: inst.ID, At: now.Add(2 * time.Minute), Evidence: "an action on checkpoint r-1.gone"}
	if f.Observe(&back) != nil || f.Observe(&remarked) != nil {
		t.Fatal("asked twice about one loss")
	}
	if n := strings.Count(out.String(), "⚠ "); n != 1 {
		t.Fatalf("%d warnings after the same loss was marked again, want 1:\n%s", n, out.String())
	}

	// Decided again: one decision line; a second loss warns and asks again.
	decidedAgain := decided
	decidedAgain.LostDecision = remarked.LostDecision
	f.Observe(&decidedAgain)
	if n := strings.Count(out.String(), "✓ "); n != 1 {
		t.Fatalf("%d decision lines after deciding again, want 1:\n%s", n, out.String())
	}
	if got := f.Observe(&remarked); got == nil || strings.Count(out.String(), "⚠ ") != 2 {
		t.Fatalf("a second loss was not warned of and asked again (%v):\n%s", got, out.String())
	}
}

func TestPresenterShowsNotices(t *testing.T) {
	var out bytes.Buffer
	p := New(&out)
	p.Notice(context.Background(), &pipeline.Run{ID: "r-1"}, "model unavailable, retry 2 of 4 in 8s")
	if got := out.String(); got != "  … model unavailable, retry 2 of 4 in 8s\n" {
		t.Fatalf("notice printed as %q", got)
	}
}

func TestPromptTypesSourcesByTheirOwnNumbers(t *testing.T) {
	inst := instance(t, checkpoints.SourceReview, pipeline.SourcesPayload{}, nil)
	for i := range inst.Fields {
		if inst.Fields[i].Type == checkpoints.FieldMultiSelect {
			inst.Fields[i].Options = []checkpoints.Option{{Value: "4", Label: "4. COP study"}, {Value: "7", Label: "7. Costs"}}
		}
	}
	var out bytes.Buffer
	d, err := NewPrompter(strings.NewReader("e\n7\n\n.\n"), &out).Ask(context.Background(), inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Values["relevant"].([]string); len(got) != 1 || got[0] != "7" {
		t.Fatalf("typing 7 chose %v, want source 7", d.Values["relevant"])
	}
	if !strings.Contains(out.String(), "  4) COP study\n  7) Costs\n") {
		t.Errorf("the sources are not listed by their own numbers:\n%s", out.String())
	}
}

func TestPromptSkipsOnlyAnOptionalCheckpoint(t *testing.T) {
	critical := instance(t, checkpoints.CriticalIssues, pipeline.CriticalPayload{}, nil) // optional
	var out bytes.Buffer
	if _, err := NewPrompter(strings.NewReader("s\n"), &out).Ask(context.Background(), critical, nil); !errors.Is(err, ErrSkip) {
		t.Fatalf("skip on an optional checkpoint: %v", err)
	}
	if !strings.Contains(out.String(), "[s]kip") {
		t.Errorf("the skip key is not offered:\n%s", out.String())
	}
	plan := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, nil) // required
	out.Reset()
	d, err := NewPrompter(strings.NewReader("s\na\n"), &out).Ask(context.Background(), plan, nil)
	if err != nil || d.Action != checkpoints.Approve || !strings.Contains(out.String(), "Please answer [a]pprove / [e]dit / [r]eject") {
		t.Fatalf("skip on a required checkpoint: %+v %v\n%s", d, err, out.String())
	}
}

func TestRenderACustomCheckpointFieldByField(t *testing.T) {
	def := checkpoints.Definition{ID: "audience_check", ControlType: "audience_check", Label: "Who is this for?", Required: false, Fields: []checkpoints.Field{
		{Key: "audience", Type: checkpoints.FieldText, Label: "Audience", Required: true, Help: "who reads the report"},
		{Key: "tone", Type: checkpoints.FieldRadio, Label: "Tone", Options: []checkpoints.Option{{Value: "plain", Label: "Plain"}, {Value: "technical", Label: "Technical"}}},
		{Key: "budget", Type: checkpoints.FieldNumber, Label: "Budget in EUR"},
	}}
	raw, _ := json.Marshal(pipeline.PlanPayload{Question: "q"})
	inst := checkpoints.NewInstance(def, "r-1.c", "r-1", raw, def.Fields, map[string]any{"tone": "plain"}, now)
	golden(t, "checkpoint_custom", RenderCheckpoint(inst))
}

func TestADecisionAmongChoicesIsRecordedAsTheChoice(t *testing.T) {
	inst := instance(t, checkpoints.CriticalIssues, pipeline.CriticalPayload{Version: 1}, nil)
	inst.Decision = &checkpoints.Decision{Action: checkpoints.Approve, By: "ann", At: now}
	if got := DecisionLine(&inst); !strings.Contains(got, "chose “Publish as it is” by ann") {
		t.Errorf("decision line %q does not say what was chosen", got)
	}
}

func TestACheckpointThatApprovesOnTimeoutSaysSo(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, pipeline.PlanPayload{}, nil)
	inst.OnTimeout = checkpoints.TimeoutApprove
	if got := RenderCheckpoint(inst); !strings.Contains(got, "It approves itself at "+inst.DeadlineAt.Local().Format("2006-01-02 15:04")) {
		t.Errorf("the policy is not shown:\n%s", got)
	}
	inst.Decision = &checkpoints.Decision{Action: checkpoints.Approve, By: checkpoints.ByTimeout, At: inst.DeadlineAt}
	if got := DecisionLine(&inst); !strings.Contains(got, "approved itself") {
		t.Errorf("decision line %q", got)
	}
}

func TestTypedAnswersPeopleWrite(t *testing.T) {
	agree := checkpoints.Field{Key: "agree", Type: checkpoints.FieldCheckbox, Label: "I agree"}
	sources := checkpoints.Field{Key: "relevant", Type: checkpoints.FieldMultiSelect, Label: "Relevant", Options: []checkpoints.Option{{Value: "1"}, {Value: "3"}, {Value: "4"}}}
	tags := checkpoints.Field{Key: "tags", Type: checkpoints.FieldChips, Label: "Tags"}
	for _, tc := range []struct {
		f    checkpoints.Field
		in   string
		want any
	}{
		{agree, "yes", true}, {agree, "y", true}, {agree, "No", false}, {agree, "true", true},
		{sources, "1 3 4", []string{"1", "3", "4"}}, {sources, "1, 4", []string{"1", "4"}}, {sources, "3,4 1", []string{"3", "4", "1"}},
		{tags, "heat pumps, cold", []string{"heat pumps", "cold"}},
	} {
		vals, errs := checkpoints.Validate([]checkpoints.Field{tc.f}, map[string]any{tc.f.Key: parseInput(tc.f, tc.in)})
		if len(errs) > 0 {
			t.Errorf("%s %q: refused: %v", tc.f.Key, tc.in, errs)
			continue
		}
		if got := vals[tc.f.Key]; fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %q = %v, want %v", tc.f.Key, tc.in, got, tc.want)
		}
	}
}

func TestCriticalIssuesAreGroupedBySeverity(t *testing.T) {
	p := pipeline.CriticalPayload{Version: 2, Title: "Heat pumps", Score: 4.1}
	p.Items = append(p.Items, pipeline.CritiqueItem{Severity: "critical", Category: "accuracy", Description: "A figure is wrong.", SuggestedFix: "Use 2.8."})
	for i := range 9 {
		p.Items = append(p.Items, pipeline.CritiqueItem{Severity: "major", Category: "citation", Description: fmt.Sprintf("Unsupported claim %d: %s", i+1, strings.Repeat("a long sentence ", 20)), SuggestedFix: "Quote the source."})
	}
	p.Items = append(p.Items, pipeline.CritiqueItem{Severity: "major", Category: "style", Description: "Wordy."},
		pipeline.CritiqueItem{Severity: "minor", Category: "style", Description: "Typos."})
	got := RenderCheckpoint(instance(t, checkpoints.CriticalIssues, p, nil))
	for _, want := range []string{"Critical (1):\n  1. [accuracy] A figure is wrong. → Use 2.8.\n", "Major (10):\n", "  …and 6 more: 5 citation, 1 style\n", "Minor (1):\n  1. [style] Typos.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n > 16 {
		t.Errorf("%d lines for 12 issues:\n%s", n, got)
	}
}

func TestARejectedDraftAtTheRevisionLimitSaysChangesEndTheRun(t *testing.T) {
	inst := instance(t, checkpoints.DraftReview, pipeline.DraftPayload{Version: 3, NotPassed: true, AtRevisionLimit: true, Recommendation: "revise"}, nil)
	if got := RenderCheckpoint(inst); !strings.Contains(got, "The revision limit is reached") {
		t.Errorf("not said:\n%s", got)
	}
}
