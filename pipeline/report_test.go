package pipeline

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// reportRun is fixtureRun with a reviewed draft, checkpoint decisions, a
// bound, errors and a trace.
func reportRun() *Run {
	r := fixtureRun()
	r.Sources[2].Relevant = true // marked at the source review, never read
	d := checkedDraft()
	d.Sections[1].Content += " A blog said otherwise [3] (https://blog.example.net/winter)."
	r.Drafts = []Draft{d}
	r.Critiques = []Critique{{DraftVersion: 1, Score: 8.4, Recommendation: RecommendApprove, Summary: "Good."}}
	r.Counters.Iteration = 0
	r.Bounds = []string{"gap-filling search rounds limit (2) reached"}
	r.Errors = []RunError{
		{At: fixtureNow(), Step: StepSearch, Kind: "search", Message: "brave: HTTP 429"},
		{At: fixtureNow(), Step: StepFetch, Kind: "fetch", Message: "https://blog.example.net/winter: HTTP 403"},
	}
	r.Trace = []TraceEntry{
		{At: fixtureNow(), Step: StepPlan, Message: "plan 1: 3 sub-questions"},
		{At: fixtureNow().Add(time.Minute), Step: StepReview, Message: "review of draft 1: score 8.4, approve"},
	}
	r.Checkpoints = []checkpoints.Instance{{
		ID: "r-fixture.abc", DefinitionID: "plan_review", Label: "Review plan",
		Decision: &checkpoints.Decision{Action: checkpoints.Edit, By: "U1", At: fixtureNow()},
		Audit: []checkpoints.AuditEntry{
			{At: fixtureNow(), Actor: "engine", From: checkpoints.StatePending, To: checkpoints.StateOffered},
			{At: fixtureNow().Add(time.Minute), Actor: "U1", From: checkpoints.StateOffered, To: checkpoints.StateSubmitted, Changes: []checkpoints.Change{{Key: "sub_questions"}}},
		},
	}, {
		ID: "r-fixture.def", DefinitionID: "draft_review",
		Audit: []checkpoints.AuditEntry{{At: fixtureNow().Add(time.Hour), Actor: "timer", From: checkpoints.StateOffered, To: checkpoints.StateTimedOut, Note: "no answer in 24h"}},
	}}
	return r
}

func TestReportBuildComplete(t *testing.T) {
	r := reportRun()
	now := fixtureNow().Add(time.Hour)
	rep := BuildReport(r, now)
	if rep.Status != ReportComplete || rep.Confidence != ConfidenceHigh {
		t.Errorf("status/confidence = %s/%s, want complete/high", rep.Status, rep.Confidence)
	}
	// Invariant 8: every reference is a fetched page, every marker a reference.
	fetched := map[int]Page{}
	for _, p := range r.Pages {
		fetched[p.SourceID] = p
	}
	for _, ref := range rep.References {
		if p, ok := fetched[ref.SourceID]; !ok || ref.URL != pageAddress(p) {
			t.Errorf("reference %+v is not a fetched page", ref)
		}
	}
	if len(rep.References) != 2 {
		t.Errorf("got %d references, want 2", len(rep.References))
	}
	for _, s := range rep.Sections {
		for _, n := range s.Citations {
			if n < 1 || n > len(rep.References) {
				t.Errorf("section %q cites [%d] with %d references", s.Title, n, len(rep.References))
			}
		}
	}
	body, _, _ := strings.Cut(rep.Markdown, "## References")
	if strings.Contains(rep.Markdown, "[3]") || strings.Contains(body, "blog.example.net") {
		t.Errorf("report cites an unread source:\n%s", rep.Markdown)
	}
	// The unread source a person marked relevant is listed, not cited.
	if len(rep.AlsoRelevant) != 1 || rep.AlsoRelevant[0].Read || !strings.Contains(rep.Markdown, "## Also relevant") {
		t.Errorf("also relevant = %+v", rep.AlsoRelevant)
	}
	m := rep.Metadata
	if m.RunID != "r-fixture" || m.CompletedAt != now || m.FinalScore != 8.4 || m.Iterations != 1 || m.SourcesUsed != 2 || m.Tokens != 15400 || m.CostUSD != 0.1234 || m.WordCount == 0 {
		t.Errorf("metadata = %+v", m)
	}
	p := rep.Provenance
	if p.QueriesExecuted != 2 || len(p.SubQuestions) != 3 || len(p.Trace) != 2 || p.Question != r.Question {
		t.Errorf("provenance = %+v", p)
	}
	if len(p.Decisions) != 2 || !strings.Contains(p.Decisions[0], "plan_review: edit by U1") || !strings.Contains(p.Decisions[0], "sub_questions") || !strings.Contains(p.Decisions[1], "draft_review: timed out") {
		t.Errorf("decisions = %q", p.Decisions)
	}
	caveats := strings.Join(rep.Caveats, "\n")
	for _, want := range []string{"Limit reached: gap-filling", "brave: HTTP 429", "1 page(s) could not be read", "removed"} {
		if !strings.Contains(caveats, want) {
			t.Errorf("caveats lack %q:\n%s", want, caveats)
		}
	}
	if rep.Markdown != RenderMarkdown(rep) {
		t.Error("Markdown is not the rendering of the report")
	}
	checkGolden(t, "report_complete.md", rep.Markdown)
}

func TestReportConfidenceThreshold(t *testing.T) {
	for _, c := range []struct {
		score float64
		want  string
	}{{8.0, ConfidenceHigh}, {7.99, ConfidenceMedium}, {9.5, ConfidenceHigh}} {
		r := reportRun()
		r.Critiques[0].Score = c.score
		if got := BuildReport(r, fixtureNow()).Confidence; got != c.want {
			t.Errorf("score %v: confidence %s, want %s", c.score, got, c.want)
		}
	}
	r := reportRun()
	r.Critiques = nil
	if got := BuildReport(r, fixtureNow()).Confidence; got != ConfidenceMedium {
		t.Errorf("unreviewed draft: confidence %s, want medium", got)
	}
	r = reportRun()
	r.Critiques = append(r.Critiques, Critique{DraftVersion: 1, Human: "edited by a person"})
	if got := BuildReport(r, fixtureNow()); got.Confidence != ConfidenceHigh || got.Metadata.FinalScore != 8.4 {
		t.Errorf("a human critique replaced the reviewer's score: %s %v", got.Confidence, got.Metadata.FinalScore)
	}
}

func TestReportBuildWithoutDraftFallsBack(t *testing.T) {
	r := fixtureRun()
	rep := BuildReport(r, fixtureNow())
	if rep.Status != ReportPartial || rep.Confidence != ConfidenceLow {
		t.Errorf("report without a draft: %s/%s, want partial/low", rep.Status, rep.Confidence)
	}
}

func TestReportFallbackDraft(t *testing.T) {
	r := reportRun()
	r.Critiques[0].Score = 4.1
	r.Critiques[0].Items = critiqueItems(2, 1, 0)
	rep := BuildFallback(r, "draft rejected by the reviewer", fixtureNow().Add(time.Hour))
	if rep.Status != ReportPartial || rep.Confidence != ConfidenceLow || rep.Reason != "draft rejected by the reviewer" {
		t.Errorf("fallback = %s/%s/%q", rep.Status, rep.Confidence, rep.Reason)
	}
	caveats := strings.Join(rep.Caveats, "\n")
	for _, want := range []string{"Draft version 1 did not pass final review", "2 critical issue(s)", "Search backend error: brave: HTTP 429", "Error during fetch"} {
		if !strings.Contains(caveats, want) {
			t.Errorf("caveats lack %q:\n%s", want, caveats)
		}
	}
	if rep.Metadata.FinalScore != 4.1 || rep.Title != "Heat pumps in cold climates" || len(rep.References) != 2 {
		t.Errorf("fallback content: score %v title %q refs %d", rep.Metadata.FinalScore, rep.Title, len(rep.References))
	}
	checkGolden(t, "report_fallback_draft.md", rep.Markdown)
}

func TestReportFallbackAnalysis(t *testing.T) {
	r := fixtureRun()
	r.Analysis.Findings = append(r.Analysis.Findings, Finding{Text: "Unread claim.", Sources: []int{3}})
	rep := BuildFallback(r, "the budget ran out", fixtureNow())
	if len(rep.Sections) == 0 || rep.Sections[0].Title != "Key findings" {
		t.Fatalf("analysis fallback sections = %+v", rep.Sections)
	}
	if !strings.Contains(strings.Join(rep.Caveats, "\n"), "Writing did not complete") {
		t.Errorf("caveats = %q", rep.Caveats)
	}
	for _, ref := range rep.References {
		if ref.SourceID == 3 {
			t.Errorf("analysis fallback cites unread source 3")
		}
	}
	checkGolden(t, "report_fallback_analysis.md", rep.Markdown)
}

func TestReportFallbackSearchResults(t *testing.T) {
	r := fixtureRun()
	r.Analysis, r.Pages = nil, nil
	r.Sources = append(r.Sources, Source{ID: 4, URL: "https://excluded.example", Title: "Excluded", Score: 1, Excluded: true})
	rep := BuildFallback(r, "no page could be read", fixtureNow())
	if len(rep.Sections) != 1 || len(rep.References) != 0 {
		t.Fatalf("search fallback: %d sections, %d references", len(rep.Sections), len(rep.References))
	}
	c := rep.Sections[0].Content
	if strings.Contains(c, "excluded.example") {
		t.Error("an excluded source is listed")
	}
	if strings.Index(c, "example.org") > strings.Index(c, "news.example.com") {
		t.Error("search results are not best first")
	}
	checkGolden(t, "report_fallback_search.md", rep.Markdown)
}

func TestReportFallbackNothing(t *testing.T) {
	r := &Run{ID: "r-empty", Question: "Anything?", CreatedAt: fixtureNow()}
	rep := BuildFallback(r, "cancelled", fixtureNow())
	if len(rep.Sections) != 0 || !strings.Contains(strings.Join(rep.Caveats, "\n"), "before it collected any material") {
		t.Errorf("empty fallback = %+v", rep)
	}
	if rep.Sections == nil || rep.References == nil || rep.Provenance.Decisions == nil {
		t.Error("empty fallback has nil slices")
	}
	checkGolden(t, "report_fallback_nothing.md", rep.Markdown)
}

func TestReportFallbackLastErrors(t *testing.T) {
	r := &Run{ID: "r-errs", Question: "q"}
	for i := range 8 {
		r.Errors = append(r.Errors, RunError{Step: StepFetch, Kind: "internal", Message: "e" + string(rune('0'+i))})
	}
	rep := BuildFallback(r, "x", fixtureNow())
	caveats := strings.Join(rep.Caveats, "\n")
	if strings.Contains(caveats, "e2") || !strings.Contains(caveats, "e3") || !strings.Contains(caveats, "e7") {
		t.Errorf("fallback should state the last 5 errors:\n%s", caveats)
	}
}

func TestReportNothingNew(t *testing.T) {
	r := fixtureRun()
	r.Since = time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	rep := NothingNewReport(r, fixtureNow())
	if !rep.NothingNew || rep.Status != ReportComplete || !strings.Contains(rep.Markdown, "Nothing material is new since 2026-03-07.") {
		t.Errorf("nothing-new report = %+v", rep)
	}
	checkGolden(t, "report_nothing_new.md", rep.Markdown)
	r.Since = time.Time{}
	if rep := NothingNewReport(r, fixtureNow()); !strings.Contains(rep.Abstract, "since the previous digest") {
		t.Errorf("abstract without Since = %q", rep.Abstract)
	}
}

func TestReportRenderMarkdownShape(t *testing.T) {
	rep := &Report{
		Status: ReportComplete, Title: "T\nwith newline", Abstract: "A.",
		Sections:   []Section{{Title: "S", Content: "C [1]."}},
		Conclusion: "Z.",
		References: []Reference{{N: 1, Title: "Ref", URL: "https://x.example/p", Domain: "x.example", Published: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}},
		Metadata:   Metadata{RunID: "r1", SourcesUsed: 1, Iterations: 2, FinalScore: 8.25, CostUSD: 0.5},
	}
	md := RenderMarkdown(rep)
	order := []string{"# T with newline\n", "## Abstract", "## S", "## Conclusion", "## References", "[1] Ref — x.example (2024-01-02) <https://x.example/p>", "_Run r1 · 1 source(s) · 2 iteration(s) · score 8.2/10 · $0.5000_"}
	last := -1
	for _, s := range order {
		i := strings.Index(md, s)
		if i < 0 || i < last {
			t.Fatalf("markdown lacks %q in order:\n%s", s, md)
		}
		last = i
	}
	if strings.Contains(md, "Partial report") || strings.Contains(md, "**Notes**") {
		t.Error("a complete report without caveats shows a status box")
	}
	rep.Status, rep.Reason, rep.Caveats = ReportPartial, "why", []string{"one", "two"}
	md = RenderMarkdown(rep)
	if !strings.Contains(md, "> **Partial report**: why") || !strings.Contains(md, "> - two") {
		t.Errorf("partial report lacks its status box:\n%s", md)
	}
	if !slices.Equal(rep.Caveats, []string{"one", "two"}) {
		t.Error("RenderMarkdown modified the report")
	}
}

func TestUnsupportedClaimsAreMarkedInTheBodyAndListedOnce(t *testing.T) {
	rep := BuildReport(reportRun(), fixtureNow().Add(time.Hour))
	md := rep.Markdown
	// Both sources of the conclusion's sentence are unsupported: marked for
	// each, and the sentence listed once with both reasons.
	if !strings.Contains(md, "They work, at a price [1, 2] (unverified: [1]) (unverified: [2]).") &&
		!strings.Contains(md, "They work, at a price [1, 2] (unverified: [2]) (unverified: [1]).") {
		t.Errorf("the unsupported claims of the conclusion are not marked in the body:\n%s", md)
	}
	if n := strings.Count(md, "Unsupported (Conclusion): They work, at a price"); n != 1 {
		t.Errorf("the conclusion's sentence is listed %d times, want once:\n%s", n, md)
	}
	if !strings.Contains(md, "cost a known amount [2] (unverified).") {
		t.Errorf("the abstract's unsupported claim is not marked:\n%s", md)
	}
	if strings.Contains(md, "-15 °C [1] (unverified)") {
		t.Errorf("a verified claim is marked unverified:\n%s", md)
	}
}

func TestTheDraftReviewListsAnUnsupportedSentenceOnce(t *testing.T) {
	r := reportRun()
	s := claimSummary(r.Drafts[0], r.Pages)
	n := 0
	for _, v := range s.Unsupported {
		if strings.HasPrefix(v.Sentence, "They work, at a price") {
			n++
			if len(v.Also) != 1 || v.Also[0].SourceID == v.SourceID {
				t.Errorf("the sentence's second source is not listed with it: %+v", v)
			}
		}
	}
	if n != 1 || s.Unlisted() != 0 {
		t.Fatalf("listed %d times, %d left out: %+v", n, s.Unlisted(), s.Unsupported)
	}
}
