package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// Plan bounds (seed 001 §2.1).
const (
	minSubQuestions, maxSubQuestions = 3, 7
	minQueries, maxQueries           = 5, 15
	rankBatchSize                    = 20
	maxShrinks                       = 3
	sourceReviewOptions              = 25
)

// generate makes one LLM call and books its usage on the run.
func (e *Engine) generate(ctx context.Context, r *Run, role Role, name, system, user string, out any) error {
	u, err := e.cfg.Model.Generate(ctx, Prompt{Role: role, Name: name, System: system, User: user, OnRetry: e.modelRetryNotice(ctx, r)}, out)
	r.Spend.PromptTokens += u.PromptTokens
	r.Spend.CompletionTokens += u.CompletionTokens
	r.Spend.CostUSD += u.CostUSD
	calls := u.Calls
	if calls == 0 {
		calls = 1
	}
	r.Spend.LLMCalls += calls
	if u.UnknownPrice {
		r.addBound(fmt.Sprintf("the price of model %q is unknown (set LLM_PRICES): its cost is counted as $0, so the cost limit does not cover it", u.Model))
	}
	if e.cfg.Observer != nil {
		e.cfg.Observer.LLMUsage(role, u)
	}
	return err
}

// overBudget records and reports a cost or working-time bound that was hit.
func (e *Engine) overBudget(r *Run) bool {
	hit := false
	if r.Limits.MaxCostUSD > 0 && r.Spend.CostUSD >= r.Limits.MaxCostUSD {
		r.addBound(fmt.Sprintf("cost limit reached: spent $%.4f of $%.4f; the report was written with what the run had", r.Spend.CostUSD, r.Limits.MaxCostUSD))
		hit = true
	}
	if r.Limits.MaxWall > 0 && r.Active >= r.Limits.MaxWall {
		r.addBound(fmt.Sprintf("time limit reached: %s of working time (limit %s); the report was written with what the run had", r.Active.Round(time.Second), r.Limits.MaxWall))
		hit = true
	}
	return hit
}

// toFallback routes the run to the fallback with a reason.
func (r *Run) toFallback(reason string) {
	if r.FallbackReason == "" {
		r.FallbackReason = reason
	}
	r.Step = StepFallback
}

// ---- plan ----

func (e *Engine) stepPlan(ctx context.Context, r *Run) error {
	now := e.cfg.Now()
	if e.overBudget(r) {
		r.toFallback("the budget ran out before a plan was made")
		return nil
	}
	system, user := PlannerPrompt(r, now)
	var out PlanOutput
	if err := e.generate(ctx, r, RolePlanner, "research_plan", system, user, &out); err != nil {
		return err
	}
	r.Counters.PlanRounds++
	r.SearchRoundQueries(normalizePlan(r, out, now))
	for i := range r.Feedback {
		r.Feedback[i].Used = true
	}
	r.Estimate = ptr(e.estimate(r))
	r.Step = StepSearch
	r.trace(now, StepPlan, "plan %d: %d sub-questions, %d queries", r.Counters.PlanRounds, len(r.Plan.SubQuestions), len(r.pendingQueries()))
	_, err := e.pause(ctx, r, checkpoints.AfterPlanning, r.planPayload(), nil, r.planValues())
	return err
}

func ptr[T any](v T) *T { return &v }

func (e *Engine) estimate(r *Run) Estimate {
	var in, out float64
	if p, ok := e.cfg.Model.(Pricer); ok {
		in, out = p.Price(RoleWriter)
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

func clamp01(f float64) float64 { return max(0, min(1, f)) }

func (r *Run) planPayload() PlanPayload {
	p := PlanPayload{Question: r.Question, Round: r.Counters.PlanRounds}
	if r.Plan != nil {
		p.SubQuestions = r.Plan.SubQuestions
		p.Sections = r.Plan.Sections
		p.Methodology = r.Plan.Methodology
		p.Warnings = r.Plan.Warnings
	}
	for _, i := range r.pendingQueries() {
		p.Queries = append(p.Queries, QueryView{Text: r.Queries[i].Text, Kind: r.Queries[i].Kind})
	}
	if r.Estimate != nil {
		p.Estimate = *r.Estimate
	}
	return p
}

func (r *Run) planValues() map[string]any {
	var qs []string
	for _, i := range r.pendingQueries() {
		qs = append(qs, r.Queries[i].Kind+": "+r.Queries[i].Text)
	}
	v := map[string]any{
		"queries": strings.Join(qs, "\n"),
		"depth":   string(r.Depth),
	}
	if r.Plan != nil {
		v["sub_questions"] = strings.Join(r.Plan.SubQuestions, "\n")
		v["sections"] = strings.Join(r.Plan.Sections, "\n")
	}
	return v
}

// ---- search ----

func (e *Engine) stepSearch(ctx context.Context, r *Run) error {
	now := e.cfg.Now()
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
	outcomes := make([]SearchOutcome, len(pending))
	var wg sync.WaitGroup
	sem := make(chan struct{}, e.cfg.SearchConcurrency)
	for n, i := range pending {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			q := r.Queries[i]
			outcomes[n] = e.cfg.Searcher.Search(ctx, SearchRequest{Text: q.Text, Kind: q.Kind, Since: r.Since, Limit: 10})
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	known := map[string]bool{}
	for _, u := range r.Known.URLs {
		known[u] = true
	}
	byKey := map[string]int{}
	for _, s := range r.Sources {
		byKey[s.Key] = s.ID
	}
	added, skippedKnown := 0, 0
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
		for _, h := range out.Hits {
			key := h.Key
			if key == "" {
				key = h.URL
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
			q.Hits = append(q.Hits, len(r.Sources)+1)
			r.Sources = append(r.Sources, Source{
				ID: len(r.Sources) + 1, Key: key, URL: h.URL, Title: h.Title, Snippet: h.Snippet,
				Backend: h.Backend, Kind: h.Kind, Published: h.Published, Authors: h.Authors,
				Citations: h.Citations, QueryID: q.ID, Heuristic: h.Heuristic,
			})
			added++
		}
	}
	if r.onlyReformulations(pending) {
		r.trace(now, StepSearch, "reformulated searches: %d queries, %d new sources", len(pending), added)
	} else {
		r.Counters.SearchRound++
		r.trace(now, StepSearch, "search round %d: %d queries, %d new sources (%d already reported earlier)", r.Counters.SearchRound, len(pending), added, skippedKnown)
	}
	r.trace(now, StepSearch, "by sub-question: %s", r.subQuestionTally(pending))
	if r.searchStopped() {
		r.noteSearchStopped()
	}
	r.Step = StepRank
	return nil
}

// ---- rank ----

func (e *Engine) stepRank(ctx context.Context, r *Run) error {
	now := e.cfg.Now()
	var todo []int
	for i, s := range r.Sources {
		if !s.Ranked && !s.Excluded {
			todo = append(todo, i)
		}
	}
	for start := 0; start < len(todo) && !e.overBudget(r); start += rankBatchSize {
		batch := todo[start:min(start+rankBatchSize, len(todo))]
		srcs := make([]Source, len(batch))
		for j, i := range batch {
			srcs[j] = r.Sources[i]
		}
		var subs []string
		if r.Plan != nil {
			subs = r.Plan.SubQuestions
		}
		system, user := RankerPrompt(r.Question, subs, srcs)
		var out RankOutput
		if err := e.generate(ctx, r, RoleRanker, "source_relevance", system, user, &out); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Ranking is an aid: without it, the sources' own signals decide.
			r.recordError(now, StepRank, "llm", "relevance ranking failed; using the sources' own signals: "+err.Error())
			break
		}
		for _, j := range out.Judgements {
			for _, i := range batch {
				if r.Sources[i].ID == j.SourceID {
					r.Sources[i].Relevance = clamp01(j.Relevance)
					r.Sources[i].Gist = strings.TrimSpace(j.Gist)
					r.Sources[i].Ranked = true
				}
			}
		}
	}
	for i := range r.Sources {
		s := &r.Sources[i]
		if !s.Ranked {
			s.Relevance = s.Heuristic
		}
		s.Score = 0.4*s.Heuristic + 0.6*s.Relevance
	}
	r.selectSources()
	if again, err := e.reformulate(ctx, r); err != nil {
		return err
	} else if again {
		r.Step = StepSearch
		return nil
	}
	if len(r.Sources) == 0 {
		if r.restrictedToNew() {
			r.Step = StepOutput
			return nil
		}
		r.recordError(now, StepRank, "search", "no search backend returned any result")
	}
	r.Step = StepFetch
	r.trace(now, StepRank, "ranked %d sources; %d selected to read", len(r.Sources), r.countSelected())
	_, err := e.pause(ctx, r, checkpoints.AfterSearch, r.sourcesPayload(), r.sourceFields, r.sourceValues())
	return err
}

func (r *Run) restrictedToNew() bool { return !r.Since.IsZero() || len(r.Known.URLs) > 0 }

// ranked returns source indexes, best first: marked relevant, then by score.
func (r *Run) ranked() []int {
	idx := make([]int, 0, len(r.Sources))
	for i := range r.Sources {
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		sa, sb := r.Sources[idx[a]], r.Sources[idx[b]]
		if sa.Relevant != sb.Relevant {
			return sa.Relevant
		}
		return sa.Score > sb.Score
	})
	return idx
}

// selectSources chooses what to read: sources marked relevant, then the best
// ranked, up to the run's page budget (pages already read count). Each
// gap-filling round adds a third of the budget, so what it finds gets read.
func (r *Run) selectSources() {
	base := EstimatePages(r)
	budget := base + r.Counters.GapRounds*max(2, base/3)
	for _, s := range r.Sources {
		if s.Fetched {
			budget--
		}
	}
	for _, i := range r.ranked() {
		s := &r.Sources[i]
		if s.Fetched || s.FetchErr != "" {
			continue
		}
		s.Selected = !s.Excluded && budget > 0 && (s.Relevant || s.Score > 0 || s.Heuristic >= 0)
		if s.Selected {
			budget--
		}
	}
}

func (r *Run) countSelected() int {
	n := 0
	for _, s := range r.Sources {
		if s.Selected && !s.Fetched {
			n++
		}
	}
	return n
}

func domainOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

func (r *Run) sourcesPayload() SourcesPayload {
	p := SourcesPayload{Question: r.Question, Total: len(r.Sources), ToFetch: r.countSelected()}
	for _, i := range r.ranked() {
		s := r.Sources[i]
		if s.Excluded || s.Fetched {
			continue
		}
		p.Sources = append(p.Sources, SourceView{
			ID: s.ID, Title: s.Title, URL: s.URL, Domain: domainOf(s.URL), Published: s.Published,
			Gist: s.Gist, Score: s.Score, Kind: s.Kind, Backend: s.Backend, Selected: s.Selected, Relevant: s.Relevant,
		})
		if len(p.Sources) == sourceReviewOptions {
			break
		}
	}
	seen := map[string]bool{}
	for _, e := range r.Errors {
		if e.Kind == "search" && !seen[e.Message] {
			seen[e.Message] = true
			p.Errors = append(p.Errors, e.Message)
		}
	}
	return p
}

// maxOptionLabel is the longest option label offered (Slack's limit on an
// option's text is 75 characters).
const maxOptionLabel = 75

// optionLabel cuts an option label to maxOptionLabel characters.
func optionLabel(s string) string {
	if rs := []rune(s); len(rs) > maxOptionLabel {
		return string(rs[:maxOptionLabel-1]) + "…"
	}
	return s
}

// sourceFields fills the source-review form's options with this run's sources.
func (r *Run) sourceFields(fs []checkpoints.Field) []checkpoints.Field {
	var opts []checkpoints.Option
	for _, v := range r.sourcesPayload().Sources {
		opts = append(opts, checkpoints.Option{Value: fmt.Sprint(v.ID), Label: optionLabel(fmt.Sprintf("%d. %s", v.ID, v.Title))})
	}
	for i := range fs {
		if fs[i].Type == checkpoints.FieldMultiSelect && len(fs[i].Options) == 0 {
			fs[i].Options = opts
		}
	}
	return fs
}

func (r *Run) sourceValues() map[string]any {
	var rel []string
	for _, s := range r.Sources {
		if s.Relevant && !s.Fetched {
			rel = append(rel, fmt.Sprint(s.ID))
		}
	}
	if len(rel) == 0 {
		return nil
	}
	return map[string]any{"relevant": rel}
}

// ---- fetch ----

// stepFetch reads the selected sources. It costs no LLM spend, so it runs
// even when the cost budget is spent: the writer needs something to cite.
func (e *Engine) stepFetch(ctx context.Context, r *Run) error {
	now := e.cfg.Now()
	var todo []int
	for i, s := range r.Sources {
		if s.Selected && !s.Fetched && s.FetchErr == "" && !s.Excluded {
			todo = append(todo, i)
		}
	}
	docs := make([]Document, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	sem := make(chan struct{}, e.cfg.FetchConcurrency)
	for n, i := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			docs[n], errs[n] = e.cfg.Fetcher.Fetch(ctx, r.Sources[i].URL)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	read, dup := 0, 0
	for n, i := range todo {
		s := &r.Sources[i]
		r.Spend.Fetches++
		if errs[n] != nil {
			s.FetchErr = errs[n].Error()
			r.recordError(now, StepFetch, "fetch", fmt.Sprintf("%s: %v", s.URL, errs[n]))
			continue
		}
		d := docs[n]
		if strings.TrimSpace(d.Text) == "" {
			s.FetchErr = "no readable text"
			continue
		}
		if other, ok := r.nearDuplicate(d.Simhash); ok {
			s.FetchErr = "near-duplicate of " + other
			dup++
			continue
		}
		s.Fetched = true
		title := d.Title
		if title == "" {
			title = s.Title
		}
		published := d.Published
		if published.IsZero() {
			published = s.Published
		}
		r.Pages = append(r.Pages, Page{
			SourceID: s.ID, URL: s.URL, FinalURL: d.FinalURL, Title: title, Author: d.Author,
			Published: published, Text: d.Text, Truncated: d.Truncated, Simhash: d.Simhash, FetchedAt: now,
		})
		read++
	}
	r.trace(now, StepFetch, "read %d of %d pages (%d near-duplicates left out)", read, len(todo), dup)
	r.Step = StepAnalyze
	return nil
}

// nearDuplicate reports whether a page with this fingerprint was read already
// in this run, or reported by an earlier digest.
func (r *Run) nearDuplicate(h uint64) (string, bool) {
	if h == 0 {
		return "", false
	}
	for _, p := range r.Pages {
		if p.Simhash != 0 && bits.OnesCount64(p.Simhash^h) <= 3 {
			return p.URL, true
		}
	}
	for _, k := range r.Known.Simhashes {
		if bits.OnesCount64(k^h) <= 3 {
			return "a page reported in an earlier digest", true
		}
	}
	return "", false
}

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
	now := e.cfg.Now()
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
	for _, f := range out.Findings {
		var ids []int
		for _, id := range f.SourceIDs {
			if fetched[id] {
				ids = append(ids, id)
			}
		}
		a.Findings = append(a.Findings, Finding{Text: strings.TrimSpace(f.Text), Sources: ids, Confidence: f.Confidence})
	}
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
	now := e.cfg.Now()
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
	now := e.cfg.Now()
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
	if n := countSeverity(c.Items, "critical"); n > 0 {
		waiting, err := e.pause(ctx, r, checkpoints.AfterReview, r.criticalPayload(c), nil, nil)
		if err != nil || waiting {
			return err
		}
	}
	if r.Step == StepOutput {
		_, err := e.pause(ctx, r, checkpoints.BeforeOutput, r.draftPayload(), r.draftFields, map[string]any{"title": d.Title})
		return err
	}
	return nil
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

func countSeverity(items []CritiqueItem, sev string) int {
	n := 0
	for _, it := range items {
		if it.Severity == sev {
			n++
		}
	}
	return n
}

func (r *Run) criticalPayload(c Critique) CriticalPayload {
	p := CriticalPayload{Version: c.DraftVersion, Score: c.Score}
	if len(r.Drafts) > 0 {
		p.Title = r.Drafts[len(r.Drafts)-1].Title
	}
	items := append([]CritiqueItem(nil), c.Items...)
	rank := map[string]int{"critical": 0, "major": 1, "minor": 2, "suggestion": 3}
	sort.SliceStable(items, func(a, b int) bool { return rank[items[a].Severity] < rank[items[b].Severity] })
	p.Items = items
	return p
}

func (r *Run) draftPayload() DraftPayload {
	d := r.Drafts[len(r.Drafts)-1]
	p := DraftPayload{Version: d.Version, Title: d.Title, Abstract: d.Abstract, Sources: len(r.Pages)}
	for _, s := range d.Sections {
		p.Sections = append(p.Sections, s.Title)
		p.WordCount += len(strings.Fields(s.Content))
	}
	if len(r.Critiques) > 0 {
		c := r.Critiques[len(r.Critiques)-1]
		p.Score, p.Recommendation, p.Summary = c.Score, c.Recommendation, c.Summary
		p.Major, p.Minor = countSeverity(c.Items, "major"), countSeverity(c.Items, "minor")
	}
	rep := BuildReport(r, time.Time{})
	p.Markdown = rep.Markdown
	p.Claims = claimSummary(d, r.Pages)
	p.Disagreements = disagreementViews(r)
	p.Diff = d.Diff
	if r.Analysis != nil {
		p.Coverage = r.Analysis.Coverage
	}
	return p
}

// draftFields fills the draft review's readings field with this run's
// disagreements, and leaves it and its note out when there are none.
func (r *Run) draftFields(fs []checkpoints.Field) []checkpoints.Field {
	opts := readingOptions(r.Analysis)
	out := fs[:0]
	for _, f := range fs {
		switch f.Key {
		case fieldReadings:
			if len(opts) == 0 {
				continue
			}
			f.Options = opts
		case fieldReadingNote:
			if len(opts) == 0 {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// ---- output and fallback ----

func (e *Engine) stepOutput(_ context.Context, r *Run) error {
	now := e.cfg.Now()
	if len(r.Drafts) == 0 {
		if r.restrictedToNew() {
			r.Report = NothingNewReport(r, now)
			r.Status = StatusCompleted
			r.Step = StepDone
			r.FinishedAt = now
			r.trace(now, StepOutput, "nothing new since the last digest")
			return nil
		}
		r.toFallback("no draft was written")
		return nil
	}
	r.Report = BuildReport(r, now)
	r.Status = StatusCompleted
	r.Step = StepDone
	r.FinishedAt = now
	r.trace(now, StepOutput, "report published")
	return nil
}

func (e *Engine) stepFallback(_ context.Context, r *Run) error {
	now := e.cfg.Now()
	reason := r.FallbackReason
	if reason == "" {
		reason = "the run could not complete normally"
	}
	r.Report = BuildFallback(r, reason, now)
	r.Status = StatusPartial
	r.Step = StepDone
	r.FinishedAt = now
	r.trace(now, StepFallback, "partial report: %s", reason)
	return nil
}
