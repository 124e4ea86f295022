package pipeline

// The plan step (sub-questions, sections and queries, within the plan's
// bounds) and the search step (one round of queries run concurrently, their
// hits kept as sources).

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// ---- plan ----

func (e *Engine) stepPlan(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	if e.overBudget(r) {
		r.toFallback("the budget ran out before a plan was made")
		return nil
	}
	r.attachFiles(now)
	system, user := PlannerPrompt(r, now)
	var out PlanOutput
	if err := e.generate(ctx, r, RolePlanner, "research_plan", system, user, &out); err != nil {
		return err
	}
	r.Counters.PlanRounds++
	r.SearchRoundQueries(normalizePlan(r, out, now))
	r.takeClarification(out, now)
	for i := range r.Feedback {
		r.Feedback[i].Used = true
	}
	r.Estimate = ptr(e.estimate(r))
	r.Step = StepSearch
	r.trace(now, StepPlan, "plan %d: %d sub-questions, %d queries", r.Counters.PlanRounds, len(r.Plan.SubQuestions), len(r.pendingQueries()))
	_, err := e.pause(ctx, r, checkpoints.AfterPlanning)
	return err
}

func ptr[T any](v T) *T { return &v }

func (e *Engine) estimate(r *Run) Estimate {
	var in, out float64
	if e.cfg.Prices != nil {
		in, out = e.cfg.Prices.Price(RoleWriter)
	}
	return EstimatePlan(r, in, out)
}

// normalizePlan applies the plan bounds and returns the plan's queries.
func normalizePlan(r *Run, out PlanOutput, now time.Time) []Query {
	subs := cleanLines(out.SubQuestions)
	if len(subs) > maxSubQuestions {
		subs = subs[:maxSubQuestions]
	}
	if len(subs) == 0 {
		subs = []string{r.Question}
	}
	sections := cleanLines(out.Sections)
	if len(sections) == 0 {
		sections = append([]string(nil), subs...)
	}
	r.Plan = &Plan{
		SubQuestions: subs,
		Sections:     sections,
		Methodology:  strings.TrimSpace(out.Methodology),
		Warnings:     cleanLines(out.Warnings),
		Confidence:   clamp01(out.Confidence),
		CreatedAt:    now,
	}
	if len(subs) < minSubQuestions {
		r.Plan.Warnings = append(r.Plan.Warnings, fmt.Sprintf("the plan has %d sub-questions (fewer than %d)", len(subs), minSubQuestions))
	}
	var qs []Query
	seen := map[string]bool{}
	for _, q := range out.Queries {
		text := strings.TrimSpace(q.Text)
		if text == "" || seen[strings.ToLower(text)] {
			continue
		}
		seen[strings.ToLower(text)] = true
		qs = append(qs, Query{Text: text, Kind: normalizeKind(q.Kind), SubQuestion: q.SubQuestion})
		if len(qs) == maxQueries {
			break
		}
	}
	if len(qs) == 0 {
		for i, s := range subs {
			qs = append(qs, Query{Text: s, Kind: "web", SubQuestion: i + 1})
		}
	}
	if len(qs) < minQueries {
		r.Plan.Warnings = append(r.Plan.Warnings, fmt.Sprintf("the plan has %d queries (fewer than %d)", len(qs), minQueries))
	}
	return qs
}

// SearchRoundQueries replaces the run's pending queries with qs.
func (r *Run) SearchRoundQueries(qs []Query) {
	kept := r.Queries[:0]
	for _, q := range r.Queries {
		if q.Status != "pending" {
			kept = append(kept, q)
		}
	}
	r.Queries = kept
	for _, q := range qs {
		q.ID = fmt.Sprintf("q%d", len(r.Queries)+1)
		q.Status = "pending"
		q.Round = r.Counters.SearchRound + 1
		r.Queries = append(r.Queries, q)
	}
}

func (r *Run) pendingQueries() []int {
	var idx []int
	for i, q := range r.Queries {
		if q.Status == "pending" {
			idx = append(idx, i)
		}
	}
	return idx
}

func normalizeKind(k string) string {
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "academic", "scholar", "paper", "papers":
		return "academic"
	case "news":
		return "news"
	}
	return "web"
}

func cleanLines(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		s = strings.TrimLeft(s, "-*• ")
		if s == "" || seen[strings.ToLower(s)] {
			continue
		}
		seen[strings.ToLower(s)] = true
		out = append(out, s)
	}
	return out
}

// ---- search ----

func (e *Engine) stepSearch(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	if e.overBudget(r) && len(r.Sources) > 0 {
		// No new searches; read what was found and write with it.
		r.Step = StepRank
		return nil
	}
	if r.searchStopped() {
		r.noteSearchStopped()
		r.skipPendingQueries(now)
		r.Step = StepRank
		return nil
	}
	pending := r.pendingQueries()
	requests := make([]SearchRequest, len(pending))
	for n, i := range pending {
		q := r.Queries[i]
		requests[n] = SearchRequest{
			Text: q.Text, Kind: q.Kind, Since: r.Since, Limit: 10, Asker: r.RequestedBy, PersonToken: r.PersonToken, Audience: r.Audience,
		}
	}
	searcher := e.cfg.Searcher
	if sr, ok := searcher.(SearchReserver); ok {
		// The step's searches take their rate budgets in one ask per budget.
		searcher = sr.Reserve(ctx, requests)
	}
	outcomes := make([]SearchOutcome, len(pending))
	var wg sync.WaitGroup
	sem := make(chan struct{}, bound(e.cfg.SearchConcurrency, len(pending)))
	for n := range pending {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			outcomes[n] = searcher.Search(ctx, requests[n])
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := searchesInterrupted(r, pending, outcomes); err != nil {
		return err // nothing recorded: the next attempt makes every search again
	}
	known := map[string]bool{}
	for _, u := range r.Known.URLs {
		known[u] = true
	}
	byKey := map[string]int{}
	for _, s := range r.Sources {
		byKey[s.Key] = s.ID
	}
	added, skippedKnown, refused := 0, 0, 0
	withheld := r.Withheld.Count
	for n, i := range pending {
		q := &r.Queries[i]
		out := outcomes[n]
		r.Spend.Searches++
		q.Results = len(out.Hits)
		q.Errors = out.Errors
		q.DoneAt = now
		q.Status = queryCompleted
		if len(out.Hits) == 0 && len(out.Errors) > 0 {
			q.Status = queryFailed
		}
		for _, msg := range out.Errors {
			r.recordError(now, StepSearch, "search", fmt.Sprintf("query %q: %s", q.Text, msg))
		}
		r.noteSearch(now, out.Notes)
		for _, h := range out.Hits {
			key := h.Key
			key = cmp.Or(key, h.URL)
			if !r.admit(key, h.Visibility) {
				continue // never stored, never in a prompt (invariant 12)
			}
			if id, ok := byKey[key]; ok {
				if !slices.Contains(q.Hits, id) {
					q.Hits = append(q.Hits, id)
				}
				continue
			}
			if known[key] || known[h.URL] {
				skippedKnown++
				continue
			}
			byKey[key] = len(r.Sources) + 1
			src := Source{
				ID: len(r.Sources) + 1, Key: key, URL: h.URL, Title: h.Title, Snippet: h.Snippet,
				Backend: h.Backend, Kind: h.Kind, Published: h.Published, Authors: h.Authors,
				Citations: h.Citations, QueryID: q.ID, Heuristic: h.Heuristic, Visibility: h.Visibility,
				Content: h.Text,
			}
			if len(h.Authors) > 0 {
				src.Author = h.Authors[0]
			}
			if why := r.Domains.RefusalOfURL(h.URL); why != "" {
				// Kept, never ranked or read, so the report lists it with its reason.
				src.Excluded, src.FetchErr = true, why
				r.Sources = append(r.Sources, src)
				refused++
				continue
			}
			q.Hits = append(q.Hits, src.ID)
			r.Sources = append(r.Sources, src)
			added++
		}
	}
	if r.onlyReformulations(pending) {
		r.trace(now, StepSearch, "reformulated searches: %d queries, %d new sources", len(pending), added)
	} else {
		r.Counters.SearchRound++
		r.trace(now, StepSearch, "search round %d: %d queries, %d new sources (%d already reported earlier)", r.Counters.SearchRound, len(pending), added, skippedKnown)
	}
	if refused > 0 {
		r.trace(now, StepSearch, "%d results %s (%s)", refused, DomainRulesReason, r.Domains)
	}
	r.traceWithheld(now, StepSearch, withheld)
	r.trace(now, StepSearch, "by sub-question: %s", r.subQuestionTally(pending))
	if r.searchStopped() {
		r.noteSearchStopped()
	}
	r.Step = StepRank
	return nil
}

// bound is how many of n calls run at once under a configured limit
// (0: all of them).
func bound(limit, n int) int {
	if limit <= 0 || limit > n {
		return max(n, 1)
	}
	return limit
}
