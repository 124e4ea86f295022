package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// draftPayload reads a draft review's payload.
func draftPayload(t *testing.T, inst checkpoints.Instance) pipeline.DraftPayload {
	t.Helper()
	if inst.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("checkpoint %s, want the draft review", inst.DefinitionID)
	}
	var p pipeline.DraftPayload
	if err := json.Unmarshal(inst.Payload, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A quote that is in no page makes its claim unsupported; the reviewer's
// routing sends the draft back although it scored well, the revision drops
// the claim, the diff says so, and the report counts what was verified. A
// quote with a word changed (and its case and punctuation) still passes.
func TestUnsupportedClaimIsRevisedAwayAndTheReportCountsVerifiedClaims(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{MadeUpClaim: true, FuzzyQuote: true}, nil)
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve}) // plan
	inst := h.next()
	p := draftPayload(t, inst)
	if p.Version != 2 {
		t.Fatalf("the draft review shows draft %d; the unsupported claim should have forced a revision first", p.Version)
	}
	if p.Claims.Total != 3 || p.Claims.Verified != 3 || p.Claims.ClaimTally.Unsupported != 0 {
		t.Errorf("draft 2 claims %+v, want 3 of 3 verified (the fuzzy quote included)", p.Claims.ClaimTally)
	}
	if p.Diff == nil || len(p.Diff.ClaimsDropped) != 1 || !strings.Contains(p.Diff.ClaimsDropped[0], researchtest.MadeUpSentence) || p.Diff.UnsupportedFixed != 1 {
		t.Fatalf("diff %+v: want the made-up claim dropped", p.Diff)
	}
	if !strings.Contains(p.Diff.Summary(), "edited Performance") {
		t.Errorf("the diff does not name the changed section: %q", p.Diff.Summary())
	}

	r, err := h.app.Engine.Load(t.Context(), inst.RunID)
	if err != nil {
		t.Fatal(err)
	}
	first := r.Drafts[0]
	if fz := first.Claims[0]; fz.Status != pipeline.ClaimVerified || fz.Match >= 1 || fz.Match < pipeline.QuoteMatchThreshold {
		t.Errorf("the fuzzy quote %q: %s at %.2f, want verified below an exact match", fz.Quote, fz.Status, fz.Match)
	}
	bad := pipeline.Unsupported(first.Claims)
	if len(bad) != 1 || !strings.Contains(bad[0].Sentence, researchtest.MadeUpSentence) || !strings.Contains(bad[0].Reason, "not found in the cited source") {
		t.Fatalf("draft 1 unsupported claims %+v", bad)
	}
	c := r.Critiques[0]
	if c.Unsupported != 1 || c.Recommendation != pipeline.RecommendRevise || c.Score < pipeline.PassThreshold {
		t.Errorf("critique of draft 1: %d unsupported, %s at %.1f; want a revision of a passing draft", c.Unsupported, c.Recommendation, c.Score)
	}
	writes := callsOf(h.llm, "research_draft")
	if len(writes) != 2 || !strings.Contains(writes[1].User, "Unsupported claim") || !strings.Contains(writes[1].User, researchtest.MadeUpSentence) {
		t.Errorf("the revision prompt does not name the unsupported claim")
	}
	if !strings.Contains(callsOf(h.llm, "critique")[0].User, "Unsupported Claims (found by code") {
		t.Error("the reviewer was not told which claims code could not verify")
	}
	if n := h.res.Count("critique") + h.res.Count("research_draft") + h.res.Count("analysis") + h.res.Count("research_plan") + h.res.Count("source_relevance"); n != len(h.llm.Calls()) {
		t.Errorf("verification made model calls of its own: %d calls, %d accounted", len(h.llm.Calls()), n)
	}

	h.decide(inst, checkpoints.Decision{Action: checkpoints.Approve})
	r = h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	assertCitationsFetched(t, r)
	md := r.Report.Markdown
	for _, want := range []string{"3 cited claims checked against the text of their sources: 3 verified", "[^1]: [", "[^3]: ["} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, researchtest.MadeUpSentence) {
		t.Error("the unsupported claim reached the report")
	}
	if len(r.Drafts) != 2 || r.Drafts[1].Diff == nil {
		t.Errorf("the run keeps %d drafts; every version and its diff must be kept", len(r.Drafts))
	}
}

// A disagreement found by the analyst reaches the draft review (with the
// readings to choose from) and the report; the reading a person chooses
// becomes the writer's brief and is stated in the report.
func TestContradictionReachesTheCheckpointAndTheReport(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{Contradiction: true}, nil)
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
	inst := h.next()
	p := draftPayload(t, inst)
	if len(p.Disagreements) != 1 || p.Disagreements[0].Topic != "Efficiency at minus 15" || len(p.Disagreements[0].A.Sources) != 1 || len(p.Disagreements[0].B.Sources) != 1 {
		t.Fatalf("disagreements at the draft review: %+v", p.Disagreements)
	}
	if !strings.Contains(p.Markdown, "## Where sources disagree") {
		t.Errorf("the draft under review lacks the disagreement section:\n%s", p.Markdown)
	}
	if offered := optionValues(inst, "readings"); strings.Join(offered, ",") != "1a,1b" {
		t.Fatalf("readings offered %v, want 1a,1b", offered)
	}
	h.decide(inst, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"readings": []string{"1a"}}})
	inst2 := h.next()
	if w := callsOf(h.llm, "research_draft"); len(w) != 2 || !strings.Contains(w[1].User, "Field trials measured a seasonal COP of 2.8") || !strings.Contains(w[1].User, "take this reading") {
		t.Fatalf("the chosen reading did not reach the writer (%d writer calls)", len(w))
	}
	if p2 := draftPayload(t, inst2); p2.Disagreements[0].Chosen != pipeline.ReadingA {
		t.Errorf("the second draft review does not show the chosen reading: %+v", p2.Disagreements)
	}
	h.decide(inst2, checkpoints.Decision{Action: checkpoints.Approve})
	r := h.finish()
	var sec *pipeline.Section
	for i := range r.Report.Sections {
		if r.Report.Sections[i].Title == pipeline.DisagreementTitle {
			sec = &r.Report.Sections[i]
		}
	}
	if sec == nil || len(sec.Citations) != 2 || !strings.Contains(sec.Content, "Certification only requires a COP of 1.75") || !strings.Contains(sec.Content, "_Reading chosen by U1:_") {
		t.Fatalf("report section %+v: want both sides cited and the chosen reading", sec)
	}
	assertCitationsFetched(t, r)
}

// Every rejected plan, with its reason, reaches the next planner prompt.
func TestPlannerSeesEveryEarlierPlan(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	h.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 3})
	h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Reject, Note: "Focus on Nordic countries"})
	h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Reject, Note: "Add running costs"})
	h.next() // the third plan
	plans := callsOf(h.llm, "research_plan")
	if len(plans) != 3 {
		t.Fatalf("%d plan calls, want 3", len(plans))
	}
	for _, want := range []string{
		"Plan 1 — rejected at plan review by U1: Focus on Nordic countries",
		"Plan 2 — rejected at plan review by U1: Add running costs",
		"web: heat pump efficiency cold climate",
	} {
		if !strings.Contains(plans[2].User, want) {
			t.Errorf("third planner prompt lacks %q", want)
		}
	}
}

// When more searches fail than RUN_MAX_SEARCH_ERRORS allows, the run stops
// searching (no gap round) and writes from what it found, saying so.
func TestTooManySearchErrorsRouteToWritingWithACaveat(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{GapsOnAnalysis: map[int]bool{1: true}}, map[string]string{"RUN_MAX_SEARCH_ERRORS": "2"})
	h.web.FailSearch = func(q string) bool { return strings.Contains(q, "cost") || strings.Contains(q, "subsidies") }
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s)", r.Status, r.FallbackReason)
	}
	if n := h.res.Count("analysis"); n != 1 || r.Counters.GapRounds != 0 {
		t.Errorf("%d analyses, %d gap rounds: a run that stopped searching must not search for gaps", n, r.Counters.GapRounds)
	}
	if !strings.Contains(r.Report.Markdown, "2 search(es) failed (limit 2): the run stopped searching") {
		t.Errorf("the report does not say the searching stopped:\n%s", r.Report.Markdown)
	}
	assertCitationsFetched(t, r)
}

// A search whose results were all irrelevant is rewritten once; the rewrite
// is searched and recorded in the trace.
func TestIrrelevantResultsAreReformulatedOnce(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{IrrelevantOnRank: map[int]bool{1: true}}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	if n := h.res.Count("query_reformulation"); n != 1 {
		t.Fatalf("%d reformulation calls, want 1", n)
	}
	rewrites := 0
	for _, q := range r.Queries {
		if q.ReformulationOf != "" {
			rewrites++
			if q.Status != "completed" || !strings.HasSuffix(q.Text, "field measurements") {
				t.Errorf("rewrite %+v was not searched", q)
			}
			if old := queryOf(r, q.ReformulationOf); old.Kind == q.Kind {
				t.Errorf("rewrite %+v kept the type of %+v (seed 001: try a different search type)", q, old)
			}
		}
	}
	if rewrites != 5 || h.web.Searches() != 10 {
		t.Errorf("%d rewrites and %d searches; want each of the 5 searches rewritten once and searched", rewrites, h.web.Searches())
	}
	var traced bool
	for _, e := range r.Trace {
		traced = traced || (strings.Contains(e.Message, "found nothing relevant; reformulated as") && strings.Contains(e.Message, "field measurements"))
	}
	if !traced {
		t.Error("the reformulation is not in the trace")
	}
	if !containsAny(r.Report.Provenance.Trace, "reformulated as") {
		t.Error("the report's provenance lacks the reformulation")
	}
}

// queryOf returns the run's query with this id.
func queryOf(r *pipeline.Run, id string) pipeline.Query {
	for _, q := range r.Queries {
		if q.ID == id {
			return q
		}
	}
	return pipeline.Query{}
}

// Searches and the analysis are accounted per sub-question, and the report
// says which sub-questions the sources answered.
func TestReportSaysWhichSubQuestionsTheSourcesAnswered(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if !containsAny(r.Report.Provenance.Trace, "by sub-question: sub-question 1: 2 searches") {
		t.Errorf("the trace does not account searches per sub-question: %q", r.Report.Provenance.Trace)
	}
	if !strings.Contains(callsOf(h.llm, "analysis")[0].User, "**Evidence Map**") {
		t.Error("the analyst was not shown which pages each sub-question's searches found")
	}
	if len(r.Report.Provenance.Coverage) != 3 || !strings.Contains(r.Report.Markdown, "1. How efficient are heat pumps in cold weather? — answered by the sources") {
		t.Errorf("coverage %+v not in the report:\n%s", r.Report.Provenance.Coverage, r.Report.Markdown)
	}
}
