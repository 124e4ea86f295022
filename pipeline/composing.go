package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// ---- analyze ----

// promptPages returns the pages to put in a prompt, best first, text capped.
func (r *Run) promptPages() []Page {
	score := map[int]float64{}
	rel := map[int]bool{}
	for _, s := range r.Sources {
		score[s.ID] = s.Score
		rel[s.ID] = s.Relevant
	}
	pages := append([]Page(nil), r.Pages...)
	sort.SliceStable(pages, func(a, b int) bool {
		if rel[pages[a].SourceID] != rel[pages[b].SourceID] {
			return rel[pages[a].SourceID]
		}
		return score[pages[a].SourceID] > score[pages[b].SourceID]
	})
	// After context-length errors, fewer pages as well as shorter ones.
	if keep := max(2, len(pages)>>r.Counters.Shrinks); keep < len(pages) {
		pages = pages[:keep]
	}
	limit := r.Limits.MaxSourceChars
	for i := range pages {
		if rs := []rune(pages[i].Text); len(rs) > limit {
			pages[i].Text = string(rs[:limit])
			pages[i].Truncated = true
		}
	}
	// Only the best pages that fit the token budget go into the prompt; the
	// rest stay listed among the run's sources. At least two always go.
	if budget := r.Limits.MaxSourceTokens; budget > 0 {
		used := 0
		for i, p := range pages {
			used += estimateTokens(p.Text)
			if used > budget && i >= 2 {
				pages = pages[:i]
				break
			}
		}
	}
	return pages
}

// estimateTokens is a rough token count of text (four characters a token).
func estimateTokens(text string) int { return (len(text) + 3) / 4 }

// noteLeftOut states in the report how many read pages the token budget kept
// out of the analysis.
func (r *Run) noteLeftOut(used int) {
	if left := len(r.Pages) - used; left > 0 {
		r.addBound(fmt.Sprintf("%d of %d pages read were left out of the analysis to stay within its token budget (%d tokens); the best-ranked were used", left, len(r.Pages), r.Limits.MaxSourceTokens))
	}
}

// shrink makes the next prompt smaller after a context-length error (seed
// 001 §4.4.1): fewer pages and shorter text. It reports false when it cannot.
func (r *Run) shrink(now time.Time, step Step) bool {
	if r.Counters.Shrinks >= maxShrinks {
		return false
	}
	r.Counters.Shrinks++
	r.Limits.MaxSourceChars = max(500, r.Limits.MaxSourceChars/2)
	r.trace(now, step, "input too long for the model: fewer sources, text cut to %d characters", r.Limits.MaxSourceChars)
	r.addBound(fmt.Sprintf("the model's context window was too small: the best-ranked sources were used, cut to %d characters each", r.Limits.MaxSourceChars))
	return true
}

func (e *Engine) stepAnalyze(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	if len(r.Pages) == 0 {
		if r.restrictedToNew() {
			r.Step = StepOutput
			return nil
		}
		if len(r.Sources) == 0 {
			r.toFallback("the searches found no sources")
		} else {
			r.toFallback(fmt.Sprintf("none of the %d sources found could be read", len(r.Sources)))
		}
		return nil
	}
	if e.overBudget(r) {
		r.Step = StepWrite
		return nil
	}
	var out AnalysisOutput
	for {
		pages := r.promptPages()
		r.noteLeftOut(len(pages))
		system, user := AnalystPrompt(r, pages)
		err := e.generate(ctx, r, RoleAnalyst, "analysis", system, user, &out)
		if err == nil {
			break
		}
		if errors.Is(err, ErrContextLength) && r.shrink(now, StepAnalyze) {
			continue
		}
		return err
	}
	fetched := map[int]bool{}
	for _, p := range r.Pages {
		fetched[p.SourceID] = true
	}
	a := &Analysis{
		Themes: cleanLines(out.Themes), Contradictions: newContradictions(out.Contradictions, fetched), Gaps: cleanLines(out.Gaps),
		Confidence: clamp01(out.Confidence), Sufficiency: out.Sufficiency, Coverage: newCoverage(planSubQuestions(r), out.SubQuestions, fetched),
	}
	grades := make([]string, 0, len(out.Findings))
	for _, f := range out.Findings {
		var ids []int
		for _, id := range f.SourceIDs {
			if fetched[id] {
				ids = append(ids, id)
			}
		}
		a.Findings = append(a.Findings, Finding{Text: strings.TrimSpace(f.Text), Sources: ids})
		grades = append(grades, f.Evidence)
	}
	r.gradeFindings(a, grades, now)
	r.Analysis = a
	r.Step = StepWrite
	gapsMatter := len(a.Gaps) > 2 || a.Sufficiency == "gaps_major"
	switch {
	case !gapsMatter:
	case r.Counters.GapRounds >= r.Limits.MaxGapRounds:
		r.addBound(fmt.Sprintf("gap-filling search rounds limit (%d) reached; open gaps: %s", r.Limits.MaxGapRounds, strings.Join(a.Gaps, "; ")))
	case r.searchStopped():
		r.noteSearchStopped()
	case e.overBudget(r):
	default:
		qs := out.RecommendedQueries
		if len(qs) == 0 {
			for _, g := range a.Gaps[:min(3, len(a.Gaps))] {
				qs = append(qs, PlannedQuery{Text: g, Kind: "web"})
			}
		}
		var queries []Query
		for _, q := range qs[:min(5, len(qs))] {
			if t := strings.TrimSpace(q.Text); t != "" {
				queries = append(queries, Query{Text: t, Kind: normalizeKind(q.Kind), SubQuestion: q.SubQuestion})
			}
		}
		if len(queries) > 0 {
			r.Counters.GapRounds++
			r.SearchRoundQueries(queries)
			r.Step = StepSearch
			r.trace(now, StepAnalyze, "%d gaps found; searching again (gap round %d of %d)", len(a.Gaps), r.Counters.GapRounds, r.Limits.MaxGapRounds)
			return nil
		}
	}
	r.trace(now, StepAnalyze, "analysis: %d findings, %d themes, %d contradictions, %d gaps; %s", len(a.Findings), len(a.Themes), len(a.Contradictions), len(a.Gaps), coverageLine(a.Coverage))
	return nil
}

// ---- write ----

func (e *Engine) stepWrite(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	if e.overBudget(r) && len(r.Drafts) > 0 {
		r.toFallback("the budget ran out while revising")
		return nil
	}
	if len(r.Pages) == 0 && r.Analysis == nil {
		r.toFallback("nothing was read to write from")
		return nil
	}
	var out DraftOutput
	for {
		system, user := WriterPrompt(r, r.promptPages())
		err := e.generate(ctx, r, RoleWriter, "research_draft", system, user, &out)
		if err == nil {
			break
		}
		if errors.Is(err, ErrContextLength) && r.shrink(now, StepWrite) {
			continue
		}
		return err
	}
	d := Draft{
		Version: len(r.Drafts) + 1, Title: strings.TrimSpace(out.Title), Abstract: strings.TrimSpace(out.Abstract),
		Conclusion: strings.TrimSpace(out.Conclusion), Notes: cleanLines(out.RevisionNotes), CreatedAt: now,
	}
	for _, s := range out.Sections {
		d.Sections = append(d.Sections, Section{Title: strings.TrimSpace(s.Title), Content: strings.TrimSpace(s.Content)})
	}
	d, notes := CheckCitations(d, r.Pages)
	for _, n := range notes {
		r.trace(now, StepWrite, "citation check: %s", n)
	}
	d.Claims, d.ClaimsChecked = VerifyClaims(d, out.Claims, r.Pages), true
	t := TallyClaims(d.Claims)
	r.trace(now, StepWrite, "draft %d written: %d claims, %d verified by quote, %d unsupported", d.Version, t.Total, t.Verified, t.Unsupported)
	if n := len(r.Drafts); n > 0 {
		prev := r.Drafts[n-1]
		diff := DiffDrafts(prev, d, revisionItems(r, prev.Version), out.Addressed)
		d.Diff = &diff
		r.trace(now, StepWrite, "draft %d against draft %d: %s", d.Version, prev.Version, diff.Summary())
	}
	r.Drafts = append(r.Drafts, d)
	for i := range r.Feedback {
		r.Feedback[i].Used = true
	}
	if e.overBudget(r) {
		r.toFallback("the budget ran out before the draft could be reviewed")
		return nil
	}
	r.Step = StepReview
	return nil
}

// ---- review ----

func (e *Engine) stepReview(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	d := r.Drafts[len(r.Drafts)-1]
	var out CritiqueOutput
	system, user := ReviewerPrompt(r, d)
	if err := e.generate(ctx, r, RoleReviewer, "critique", system, user, &out); err != nil {
		return err
	}
	r.Counters.Reviews++
	canIterate := r.Counters.Iteration < r.Limits.MaxIterations
	for i := range out.Items {
		out.Items[i].Severity = strings.ToLower(strings.TrimSpace(out.Items[i].Severity))
		out.Items[i].Category = strings.ToLower(strings.TrimSpace(out.Items[i].Category))
	}
	c := Critique{DraftVersion: d.Version, Criteria: out.Criteria, Items: out.Items, Summary: strings.TrimSpace(out.Summary)}
	unsupported := evidenceItems(d)
	c.Items = append(c.Items, unsupported...)
	c.Unsupported = len(unsupported)
	c.Score = WeightedScore(c.Criteria)
	c.Recommendation = RecommendDraft(c.Score, c.Items, canIterate, clamp01(out.ImprovementPotential), c.Unsupported)
	r.Critiques = append(r.Critiques, c)
	r.trace(now, StepReview, "review of draft %d: score %.1f, %s (%d unsupported claims)", d.Version, c.Score, c.Recommendation, c.Unsupported)
	r.routeAfterReview(c, canIterate)
	return e.pauseAfterReview(ctx, r, c, canIterate)
}

// pauseAfterReview asks people about the reviewed draft. Critical issues are
// asked once a run, and only while a revision is still possible (otherwise
// nothing the person chose could change the outcome). A draft going out,
// and a draft the reviewer did not pass (rejected as not fixable by
// revision, or at the revision bound), go to the draft review, which shows
// the reviewer's verdict, in guided and full runs: a rejected draft is when
// a person's judgment matters most. With no draft review to ask (auto
// mode), a draft that did not pass goes to the fallback as before.
func (e *Engine) pauseAfterReview(ctx context.Context, r *Run, c Critique, canIterate bool) error {
	if severityCount(c.Items, severityCritical) > 0 && canIterate && r.Counters.CriticalAsked == 0 && !e.overBudget(r) {
		waiting, err := e.pause(ctx, r, checkpoints.AfterReview)
		if err != nil || waiting {
			if waiting {
				r.Counters.CriticalAsked++
			}
			return err
		}
	}
	notPassed := r.Step == StepFallback && c.notPassed()
	if r.Step != StepOutput && !notPassed {
		return nil
	}
	reason := r.FallbackReason
	if notPassed {
		r.FallbackReason = ""
		r.Step = StepOutput
	}
	waiting, err := e.pause(ctx, r, checkpoints.BeforeOutput)
	if err != nil || waiting || !notPassed {
		return err
	}
	r.toFallback(reason)
	return nil
}

// notPassed reports whether the reviewer's critique c let its draft go out
// unrevised without a person's say: a rejection, or a revision asked for at
// the revision bound (routeAfterReview sends both to the fallback).
func (c Critique) notPassed() bool {
	return c.Human == "" && c.Recommendation != RecommendApprove
}

// evidenceItems makes each unsupported claim of d a major citation issue, so
// the reviewer's routing sees it and a revision must fix or drop it.
func evidenceItems(d Draft) []CritiqueItem {
	var items []CritiqueItem
	for _, c := range Unsupported(d.Claims) {
		items = append(items, CritiqueItem{
			Category: "citation", Severity: severityMajor, Location: c.Location,
			Description:  fmt.Sprintf("Unsupported claim: %q cites source %d, but %s.", flatLine(c.Sentence), c.SourceID, c.Reason),
			SuggestedFix: fmt.Sprintf("Quote the words of source %d that support it, cite a source that does, or drop the claim.", c.SourceID),
		})
	}
	return items
}

// routeAfterReview is seed 001's decision matrix after the reviewer.
func (r *Run) routeAfterReview(c Critique, canIterate bool) {
	switch {
	case c.Recommendation == "approve":
		r.Step = StepOutput
	case c.Recommendation == "revise" && canIterate:
		r.Counters.Iteration++
		r.Step = StepWrite
	case c.Recommendation == "revise":
		r.addBound(fmt.Sprintf("revision limit (%d) reached before the draft passed review (score %.1f)", r.Limits.MaxIterations, c.Score))
		r.toFallback(fmt.Sprintf("maximum revision iterations (%d) reached", r.Limits.MaxIterations))
	default:
		r.toFallback(fmt.Sprintf("draft rejected by the reviewer (score %.1f; the reviewer judged its issues not fixable by revision)", c.Score))
	}
}

// ---- output and fallback ----

func (e *Engine) stepOutput(r *Run) {
	now := e.cfg.Clock.Now()
	if len(r.Drafts) == 0 {
		if r.restrictedToNew() {
			r.Report = NothingNewReport(r, now)
			r.Status = StatusCompleted
			r.Step = StepDone
			r.FinishedAt = now
			r.trace(now, StepOutput, "nothing new since the last digest")
			return
		}
		r.toFallback("no draft was written")
		return
	}
	r.Report = BuildReport(r, now)
	r.Status = StatusCompleted
	r.Step = StepDone
	r.FinishedAt = now
	r.trace(now, StepOutput, "report published")
}

func (e *Engine) stepFallback(r *Run) {
	now := e.cfg.Clock.Now()
	reason := r.FallbackReason
	reason = cmp.Or(reason, "the run could not complete normally")
	r.Report = BuildFallback(r, reason, now)
	r.Status = StatusPartial
	r.Step = StepDone
	r.FinishedAt = now
	r.trace(now, StepFallback, "partial report: %s", reason)
}
