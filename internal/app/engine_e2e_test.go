package app

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

func TestAutoRunProducesACitedReport(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s %s)", r.Status, r.FallbackReason, r.Failure)
	}
	assertCitationsFetched(t, r)
	if len(r.Report.References) == 0 || len(r.Pages) == 0 {
		t.Fatalf("report has %d references from %d pages", len(r.Report.References), len(r.Pages))
	}
	if !strings.Contains(r.Report.Markdown, "# Heat pumps in cold climates") {
		t.Errorf("markdown lacks the title:\n%s", r.Report.Markdown)
	}
	if r.Spend.CostUSD <= 0 || r.Spend.PromptTokens == 0 {
		t.Errorf("spend not accounted: %+v", r.Spend)
	}
	for _, schema := range []string{"research_plan", "analysis", "research_draft", "critique"} {
		if n := h.res.Count(schema); n != 1 {
			t.Errorf("%s called %d times, want 1", schema, n)
		}
	}
	if h.web.Searches() != 5 {
		t.Errorf("searches = %d, want one per planned query (5)", h.web.Searches())
	}
	// The question is carried into prompts as delimited, untrusted data.
	plan := callsOf(h.llm, "research_plan")[0]
	if !strings.Contains(plan.User, `<untrusted_data kind="question">`) {
		t.Errorf("planner prompt does not delimit the question:\n%s", plan.User)
	}
}

// TestEveryDecisionAtEveryCheckpoint drives full mode with each action at
// each built-in checkpoint and checks what the decision did.
func TestEveryDecisionAtEveryCheckpoint(t *testing.T) {
	t.Run("plan edit then reject then approve", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{}, nil)
		h.start(checkpoints.ModeGuided, pipeline.Limits{})
		plan := h.next()
		if plan.DefinitionID != checkpoints.PlanReview {
			t.Fatalf("first checkpoint %s", plan.DefinitionID)
		}
		h.decide(plan, checkpoints.Decision{Action: checkpoints.Reject, Note: "Focus on Nordic countries"})
		plan2 := h.next()
		if plan2.DefinitionID != checkpoints.PlanReview || plan2.ID == plan.ID {
			t.Fatalf("a rejected plan must be planned again; got %s %s", plan2.DefinitionID, plan2.ID)
		}
		if p := callsOf(h.llm, "research_plan"); len(p) != 2 || !strings.Contains(p[1].User, "Focus on Nordic countries") {
			t.Fatalf("the rejection note did not reach the second plan's prompt (%d plan calls)", len(p))
		}
		h.decide(plan2, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{
			"queries": "web: nordic heat pump adoption\nnews: heat pump winter 2026",
		}})
		draft := h.next()
		if draft.DefinitionID != checkpoints.DraftReview {
			t.Fatalf("after the plan, guided mode should stop at the draft; got %s", draft.DefinitionID)
		}
		r := h.decide(draft, checkpoints.Decision{Action: checkpoints.Approve})
		_ = r
		r = h.finish()
		if r.Status != pipeline.StatusCompleted {
			t.Fatalf("status %s", r.Status)
		}
		var texts []string
		for _, q := range r.Queries {
			texts = append(texts, q.Kind+": "+q.Text)
		}
		if len(texts) != 2 || texts[0] != "web: nordic heat pump adoption" || texts[1] != "news: heat pump winter 2026" {
			t.Fatalf("searched %v, want exactly the edited queries", texts)
		}
		if h.web.Searches() != 2 {
			t.Errorf("%d searches, want 2 (edited plan)", h.web.Searches())
		}
		assertCitationsFetched(t, r)
	})

	t.Run("sources edit exclude and relevant, then reject with feedback", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{}, nil)
		h.start(checkpoints.ModeFull, pipeline.Limits{MaxSources: 2})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
		src := h.next()
		if src.DefinitionID != checkpoints.SourceReview {
			t.Fatalf("got %s, want source review", src.DefinitionID)
		}
		opts := optionValues(src, "relevant")
		if len(opts) < 4 {
			t.Fatalf("source review offers %d sources to mark", len(opts))
		}
		// Reject first: feedback sends the run back to planning, and the
		// rejected sources are not offered again.
		h.web.SetPages(append(researchtest.DefaultPages(), researchtest.Page{Title: "Utility winter peak report", Body: "Utilities saw winter peaks grow with heat pump adoption, softened by demand response."}, researchtest.Page{Title: "Grid operator outlook", Body: "Operators plan for electrified heating loads through 2030."}))
		h.decide(src, checkpoints.Decision{Action: checkpoints.Reject, Note: "Find utility reports"})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve}) // the new plan
		src2 := h.next()
		if src2.DefinitionID != checkpoints.SourceReview {
			t.Fatalf("got %s", src2.DefinitionID)
		}
		var reoffered []string
		first := map[string]bool{}
		for _, v := range opts {
			first[v] = true
		}
		for _, f := range src2.Fields {
			if f.Key == "relevant" {
				for _, o := range f.Options {
					if first[o.Value] {
						reoffered = append(reoffered, o.Value)
					}
				}
				opts = nil
				for _, o := range f.Options {
					opts = append(opts, o.Value)
				}
			}
		}
		if len(reoffered) > 0 || len(opts) == 0 {
			t.Fatalf("rejected sources %v were offered again (%d offered)", reoffered, len(opts))
		}
		relevant, excluded := opts[len(opts)-1], opts[0]
		h.decide(src2, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"relevant": []string{relevant}, "exclude": []string{excluded}}})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve}) // draft
		r := h.finish()
		if r.Status != pipeline.StatusCompleted {
			t.Fatalf("status %s %s", r.Status, r.FallbackReason)
		}
		fetchedIDs := map[string]bool{}
		for _, p := range r.Pages {
			fetchedIDs[strconv.Itoa(p.SourceID)] = true
		}
		if !fetchedIDs[relevant] {
			t.Errorf("source %s marked relevant was not read (read %v)", relevant, fetchedIDs)
		}
		if fetchedIDs[excluded] {
			t.Errorf("excluded source %s was read", excluded)
		}
		if p := callsOf(h.llm, "research_plan"); len(p) != 2 || !strings.Contains(p[1].User, "Find utility reports") {
			t.Errorf("source-review feedback did not reach the planner (%d plan calls)", len(p))
		}
	})

	t.Run("critical issues edit, draft edit with changes, draft reject, approve", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{CriticalOnReview: map[int]bool{1: true}}, nil)
		h.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 3})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
		crit := h.next()
		if crit.DefinitionID != checkpoints.CriticalIssues {
			t.Fatalf("got %s, want critical issues", crit.DefinitionID)
		}
		h.decide(crit, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"guidance": "Use the Canadian field-trial figure"}})
		draft := h.next()
		if draft.DefinitionID != checkpoints.DraftReview {
			t.Fatalf("got %s, want draft review", draft.DefinitionID)
		}
		if w := callsOf(h.llm, "research_draft"); len(w) != 2 || !strings.Contains(w[1].User, "Use the Canadian field-trial figure") {
			t.Fatalf("guidance did not reach the writer (%d writer calls)", len(w))
		}
		h.decide(draft, checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"title": "Cold-climate heat pumps", "changes": "Add a cost table"}})
		draft2 := h.next()
		if w := callsOf(h.llm, "research_draft"); len(w) != 3 || !strings.Contains(w[2].User, "Add a cost table") {
			t.Fatalf("requested changes did not reach the writer (%d writer calls)", len(w))
		}
		h.decide(draft2, checkpoints.Decision{Action: checkpoints.Reject, Note: "Too short"})
		draft3 := h.next()
		if w := callsOf(h.llm, "research_draft"); len(w) != 4 || !strings.Contains(w[3].User, "Too short") {
			t.Fatalf("rejection note did not reach the writer (%d writer calls)", len(w))
		}
		h.decide(draft3, checkpoints.Decision{Action: checkpoints.Approve})
		r := h.finish()
		if r.Status != pipeline.StatusCompleted || r.Counters.Iteration != 3 {
			t.Fatalf("status %s after %d iterations", r.Status, r.Counters.Iteration)
		}
		if len(r.Report.Provenance.Decisions) < 5 {
			t.Errorf("provenance lists %d decisions: %v", len(r.Report.Provenance.Decisions), r.Report.Provenance.Decisions)
		}
	})

	t.Run("critical issues asked once: revise, then stop", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{CriticalOnReview: map[int]bool{1: true, 2: true}}, nil)
		h.start(checkpoints.ModeGuided, pipeline.Limits{})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"guidance": "Recheck every number"}})
		// The second review finds critical issues too: not asked again, the
		// writer revises; the draft review comes once the draft passes.
		draft := h.next()
		if draft.DefinitionID != checkpoints.DraftReview {
			t.Fatalf("got %s, want the draft review", draft.DefinitionID)
		}
		h.decide(draft, checkpoints.Decision{Action: checkpoints.Approve})
		r := h.finish()
		if r.Status != pipeline.StatusCompleted {
			t.Fatalf("status %s", r.Status)
		}
		if w := callsOf(h.llm, "research_draft"); !strings.Contains(w[1].User, "Recheck every number") {
			t.Error("the guidance of the critical issues did not reach the writer")
		}
	})

	t.Run("critical issues: stop and write what you have", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{CriticalOnReview: map[int]bool{1: true}}, nil)
		h.start(checkpoints.ModeGuided, pipeline.Limits{})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Reject, Note: "Not worth another round"})
		r := h.finish()
		if r.Status != pipeline.StatusPartial || !strings.Contains(r.FallbackReason, "Not worth another round") {
			t.Fatalf("status %s, reason %q", r.Status, r.FallbackReason)
		}
	})
}

func TestASecondDecisionIsRefused(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	plan := h.next()
	h.decide(plan, checkpoints.Decision{Action: checkpoints.Reject, Note: "again"})
	_, err := h.app.Engine.Decide(context.Background(), plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
	if !errors.Is(err, checkpoints.ErrAlreadyDecided) {
		t.Fatalf("second decision = %v, want ErrAlreadyDecided", err)
	}
	plan2 := h.next()
	// An invalid edit changes nothing and says which field is wrong.
	_, err = h.app.Engine.Decide(context.Background(), plan2.ID, checkpoints.Decision{Action: checkpoints.Edit, By: "U1", Values: map[string]any{"depth": "bottomless"}})
	var verr *checkpoints.ValidationError
	if !errors.As(err, &verr) || len(verr.Fields) == 0 || verr.Fields[0].Key != "depth" {
		t.Fatalf("invalid edit = %v, want a field error on depth", err)
	}
	// Cancelling ends the run; its open checkpoint is no longer current.
	if err := h.app.Engine.Cancel(context.Background(), plan2.RunID, "U1"); err != nil {
		t.Fatal(err)
	}
	r := h.finish()
	if r.Status != pipeline.StatusCancelled || r.CancelledBy != "U1" {
		t.Fatalf("status %s by %q", r.Status, r.CancelledBy)
	}
	_, err = h.app.Engine.Decide(context.Background(), plan2.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
	if !errors.Is(err, pipeline.ErrNotCurrent) {
		t.Fatalf("decision on a cancelled run = %v, want ErrNotCurrent", err)
	}
	if n := h.res.Count("analysis"); n != 0 {
		t.Errorf("a cancelled run went on to analysis (%d calls)", n)
	}
}

func TestIterationBoundGivesAPartialReport(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{ReviewScores: []float64{6}}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{MaxIterations: 2})
	r := h.finish()
	if r.Status != pipeline.StatusPartial {
		t.Fatalf("status %s, want partial", r.Status)
	}
	if n := h.res.Count("research_draft"); n != 3 {
		t.Errorf("writer called %d times, want 3 (first draft + 2 revisions)", n)
	}
	if !containsAny(r.Report.Caveats, "revision limit (2)") || !strings.Contains(r.Report.Markdown, "revision limit (2)") {
		t.Errorf("the bound is not stated: caveats %v", r.Report.Caveats)
	}
	assertCitationsFetched(t, r)
}

func TestCostBoundRoutesToWritingAndSaysSo(t *testing.T) {
	// 1000+300 tokens a call at 0.15/0.6 per million: $0.00033 a call.
	h := newHarness(t, &researchtest.Researcher{}, map[string]string{"RUN_MAX_COST_USD": "0.0005"})
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusPartial && r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	if !containsAny(r.Bounds, "cost limit reached") || !strings.Contains(r.Report.Markdown, "cost limit reached") {
		t.Fatalf("cost bound not stated: bounds %v", r.Bounds)
	}
	if n := h.res.Count("analysis"); n != 0 {
		t.Errorf("analysis ran after the budget was spent (%d calls)", n)
	}
	if n := h.res.Count("research_draft"); n != 1 {
		t.Errorf("writer called %d times, want 1 (write with what the run has)", n)
	}
}

func TestGapsSendTheRunBackToSearchAndItReadsMore(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{GapsOnAnalysis: map[int]bool{1: true}}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{MaxSources: 3})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	if r.Counters.GapRounds != 1 || h.res.Count("analysis") != 2 {
		t.Fatalf("gap rounds %d, analyses %d; want 1 and 2", r.Counters.GapRounds, h.res.Count("analysis"))
	}
	if len(r.Pages) <= 3 {
		t.Errorf("read %d pages; the gap round should read beyond the first budget of 3", len(r.Pages))
	}
	var gapQuery bool
	for _, q := range r.Queries {
		gapQuery = gapQuery || (q.Text == "heat pump reliability ten years" && q.Status == "completed")
	}
	if !gapQuery {
		t.Error("the analyst's recommended gap query was not searched")
	}
}

func TestFullModeApprovedEverywhere(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	h.start(checkpoints.ModeFull, pipeline.Limits{})
	var seen []string
	for _, want := range []string{checkpoints.PlanReview, checkpoints.SourceReview, checkpoints.DraftReview} {
		inst := h.next()
		seen = append(seen, inst.DefinitionID)
		if inst.DefinitionID != want {
			t.Fatalf("checkpoints %v, want %s next", seen, want)
		}
		h.decide(inst, checkpoints.Decision{Action: checkpoints.Approve})
	}
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	selected := 0
	for _, s := range r.Sources {
		if s.Selected {
			selected++
		}
	}
	if len(r.Pages) == 0 || len(r.Pages) > selected {
		t.Errorf("read %d pages of %d approved sources", len(r.Pages), selected)
	}
	if !strings.Contains(r.Report.Markdown, "## How this report was made") || !strings.Contains(r.Report.Markdown, "source_review: approve by U1") {
		t.Errorf("provenance missing from the report:\n%s", r.Report.Markdown)
	}
}
