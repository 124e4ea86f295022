package pipeline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
)

func TestValidateRequestRefusesTooShortQuestions(t *testing.T) {
	err := ValidateRequest(Request{Question: "  heat?  "})
	var ire *InvalidRequestError
	if !errors.As(err, &ire) || !strings.Contains(err.Error(), "too short to research (it needs at least 10 characters)") {
		t.Fatalf("a 5-character question: %v", err)
	}
	if err := ValidateRequest(Request{Question: "Heat pumps?"}); err != nil {
		t.Errorf("an 11-character question was refused: %v", err)
	}
}

func TestContradictionsReadTheOldSentenceForm(t *testing.T) {
	var a Analysis
	if err := json.Unmarshal([]byte(`{"contradictions":["Sources differ on COP", {"topic":"Cost","a":{"claim":"high","sources":[1]},"b":{"claim":"low","sources":[2]}}]}`), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Contradictions) != 2 || a.Contradictions[0].Topic != "Sources differ on COP" || a.Contradictions[0].Cited() || !a.Contradictions[1].Cited() {
		t.Fatalf("contradictions = %+v", a.Contradictions)
	}
	if _, ok := disagreementSection(&Analysis{Contradictions: a.Contradictions[:1]}); ok {
		t.Error("a disagreement without sources on both sides made a report section")
	}
}

func TestNewContradictionsKeepOnlyPagesRead(t *testing.T) {
	cs := newContradictions([]ContradictionOutput{
		{Topic: " COP ", SideA: SideOutput{Claim: "2.8", SourceIDs: []int{1, 9, 1}}, SideB: SideOutput{Claim: "1.75", SourceIDs: []int{2}}},
		{},
	}, map[int]bool{1: true, 2: true})
	if len(cs) != 1 || cs[0].Topic != "COP" || len(cs[0].A.Sources) != 1 || cs[0].A.Sources[0] != 1 {
		t.Fatalf("contradictions = %+v", cs)
	}
}

func TestNewCoverageTrustsOnlyAnswersWithPagesRead(t *testing.T) {
	cov := newCoverage([]string{"A?", "B?", "C?"}, []CoverageOutput{
		{Number: 1, Status: "answered", SourceIDs: []int{1}},
		{Number: 2, Status: "answered", SourceIDs: []int{7}}, // a page the run did not read
		{Number: 9, Status: "answered", SourceIDs: []int{1}}, // no such sub-question
	}, map[int]bool{1: true})
	if cov[0].Status != CoverageAnswered || cov[1].Status != CoverageUnanswered || cov[2].Status != "" {
		t.Fatalf("coverage = %+v", cov)
	}
	if got := CoverageSummary(cov); got != "1 of 3 sub-questions answered by the sources · 2. B? — not answered by the sources read · 3. C? — not assessed" {
		t.Errorf("summary %q", got)
	}
}

func TestDraftReviewOffersTheReadingsAndAPersonsChoiceBecomesFeedback(t *testing.T) {
	r := reportRun()
	r.Limits.MaxIterations = 3
	def := checkpoints.Builtins(fixtureNow())[3]
	if def.ID != checkpoints.DraftReview {
		t.Fatalf("builtin order changed: %s", def.ID)
	}
	fields := r.draftFields(cloneFields(def.Fields))
	var readings *checkpoints.Field
	for i := range fields {
		if fields[i].Key == checkpoints.KeyReadings {
			readings = &fields[i]
		}
	}
	if readings == nil || len(readings.Options) != 2 || readings.Options[0].Value != "1a" || !strings.Contains(readings.Options[1].Label, "Installers expect") {
		t.Fatalf("readings field = %+v", readings)
	}
	none := fixtureRun()
	none.Analysis.Contradictions = nil
	for _, f := range none.draftFields(cloneFields(def.Fields)) {
		if f.Key == checkpoints.KeyReadings || f.Key == checkpoints.KeyReadingNote {
			t.Errorf("a run without disagreements offers %s", f.Key)
		}
	}

	r.decideDraft(&checkpoints.Decision{Action: checkpoints.Edit, By: "U1", Values: map[string]any{checkpoints.KeyReadings: []string{"1a"}, checkpoints.KeyReadingNote: "Say the installers' figure is an estimate."}})
	if r.Step != StepWrite || r.Counters.Iteration != 1 {
		t.Fatalf("a chosen reading must send the draft back to the writer; step %s", r.Step)
	}
	last := r.Critiques[len(r.Critiques)-1]
	for _, want := range []string{"take this reading: \"Seasonal COP stays near 2.8 at -15 °C\" [1]", "installers' figure is an estimate"} {
		if !strings.Contains(last.Human, want) {
			t.Errorf("the person's critique %q lacks %q", last.Human, want)
		}
	}
	if c := r.Analysis.Contradictions[0]; c.Chosen != ReadingA || c.ChosenBy != "U1" {
		t.Errorf("the choice was not recorded: %+v", c)
	}
	s, _ := disagreementSection(r.Analysis)
	if !strings.Contains(s.Content, "_Reading chosen by U1:_ Seasonal COP stays near 2.8 at -15 °C") {
		t.Errorf("the report section does not say which reading was chosen:\n%s", s.Content)
	}
}

func TestEveryRejectedPlanIsKeptWithItsReason(t *testing.T) {
	r := fixtureRun()
	r.Limits.MaxIterations = 3
	r.Counters.PlanRounds = 1
	for i := range r.Queries {
		r.Queries[i].Status = "pending"
	}
	r.decidePlan(&checkpoints.Decision{Action: checkpoints.Reject, By: "U1", Note: "Too narrow"})
	r.Counters.PlanRounds = 2
	r.Plan.SubQuestions = []string{"What about noise?"}
	r.decideSources(&checkpoints.Decision{Action: checkpoints.Reject, By: "U2", Note: "Only vendor pages"})
	if len(r.PlanHistory) != 2 || r.Step != StepPlan {
		t.Fatalf("history %+v, step %s", r.PlanHistory, r.Step)
	}
	_, user := PlannerPrompt(r, fixtureNow())
	for _, want := range []string{"Plan 1 — rejected at plan review by U1: Too narrow", "What efficiency do heat pumps reach below -15 °C?", "Plan 2 — sources rejected at source review by U2: Only vendor pages", "What about noise?", "academic: cold climate heat pump COP field study"} {
		if !strings.Contains(user, want) {
			t.Errorf("planner prompt lacks %q", want)
		}
	}
}

func TestTooManyFailedSearchesStopSearching(t *testing.T) {
	r := fixtureRun()
	r.Limits.MaxSearchErrors = 1 // q3 failed
	if !r.searchStopped() {
		t.Fatal("one failed search with a limit of one did not stop the searching")
	}
	r.Limits.MaxIterations = 3
	r.decideSources(&checkpoints.Decision{Action: checkpoints.Reject, By: "U1", Note: "search again"})
	if r.Step != StepFetch || len(r.PlanHistory) != 0 || !strings.Contains(strings.Join(r.Bounds, "\n"), "1 search(es) failed (limit 1)") {
		t.Errorf("step %s, history %d, bounds %q: the run must go on with what it found", r.Step, len(r.PlanHistory), r.Bounds)
	}
}

func TestPoorQueriesAreThoseWhoseResultsWereAllIrrelevant(t *testing.T) {
	r := fixtureRun()
	r.Queries[0].Hits = []int{1, 2}
	r.Queries[1].Hits = []int{2}
	for i := range r.Sources {
		r.Sources[i].Ranked, r.Sources[i].Relevance = true, 0.1
	}
	r.Sources[0].Relevance = 0.8 // q1 found one good result
	r.Queries = append(r.Queries, Query{ID: "q4", Text: "nothing at all", Status: queryCompleted})
	got := r.poorQueries()
	if len(got) != 2 || r.Queries[got[0]].ID != "q2" || r.Queries[got[1]].ID != "q4" {
		t.Fatalf("poor queries %v, want q2 (irrelevant results) and q4 (none)", got)
	}
	r.Queries[1].Reformulated = true
	r.Queries = append(r.Queries, Query{ID: "q5", Text: "nothing again", Status: queryCompleted, ReformulationOf: "q4"})
	if got := r.poorQueries(); len(got) != 1 || r.Queries[got[0]].ID != "q4" {
		t.Errorf("a query is rewritten once and a rewrite is not rewritten: %v", got)
	}
}

func TestQueriesSavedWithoutTheirResultsAreNotRewritten(t *testing.T) {
	r := fixtureRun() // q1 and q2 have results but, as in runs saved before hits were recorded, no Hits
	if got := r.poorQueries(); len(got) != 0 {
		t.Errorf("queries without recorded results counted as poor: %v", got)
	}
}
