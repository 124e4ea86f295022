package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Search rules beyond one round: failed searches stop the searching (seed
// 002), a search whose results were all irrelevant is retried once with
// another search type and wording (seed 001: the searcher reformulates poor
// queries and tries a different search type; retrykinds.go), and searches
// are accounted per sub-question.

const (
	// defaultMaxSearchErrors is how many searches may fail before the run
	// stops searching, when Limits.MaxSearchErrors is 0 (seed 001: 3).
	defaultMaxSearchErrors = 3
	// irrelevantBelow is the relevance under which a result is irrelevant.
	irrelevantBelow = 0.3
	// reformulationResults is how many results of a poor search its rewrite
	// prompt shows.
	reformulationResults = 5
)

// Query statuses.
const (
	queryPending   = "pending"
	queryCompleted = "completed"
	queryFailed    = "failed"
	querySkipped   = "skipped" // never searched: the run had stopped searching
)

// searchErrorLimit is r's bound on failed searches, default applied.
func searchErrorLimit(r *Run) int {
	if r.Limits.MaxSearchErrors > 0 {
		return r.Limits.MaxSearchErrors
	}
	return defaultMaxSearchErrors
}

// failedSearches counts the searches that failed: every backend erred and
// none returned a result.
func (r *Run) failedSearches() int {
	n := 0
	for _, q := range r.Queries {
		if q.Status == queryFailed {
			n++
		}
	}
	return n
}

// searchStopped reports whether so many searches failed that the run makes
// no more (seed 002: too many errors route to synthesis).
func (r *Run) searchStopped() bool { return r.failedSearches() >= searchErrorLimit(r) }

// noteSearchStopped states the search-error bound in the report.
func (r *Run) noteSearchStopped() {
	r.addBound(fmt.Sprintf("%d search(es) failed (limit %d): the run stopped searching and wrote the report from what it had found", r.failedSearches(), searchErrorLimit(r)))
}

// skipPendingQueries marks every pending search as skipped.
func (r *Run) skipPendingQueries(now time.Time) {
	for _, i := range r.pendingQueries() {
		r.Queries[i].Status = querySkipped
		r.Queries[i].DoneAt = now
	}
}

// searchesInterrupted is the search step's failure when any of its
// searches (outcomes, of the queries at pending) was interrupted by our own
// infrastructure (SearchOutcome.Interrupted), nil otherwise. Recording such
// a search would count our failure against the sources (a failed search,
// toward MaxSearchErrors) or lose the results the interrupted backends would
// have given; the step fails instead, and its retry searches again.
func searchesInterrupted(r *Run, pending []int, outcomes []SearchOutcome) error {
	if allPaced(outcomes) {
		return heldBackError{fmt.Errorf("none of %d searches could be made: %w", len(outcomes), outcomes[0].Paced)}
	}
	n, first := 0, -1
	for k, out := range outcomes {
		if out.Interrupted != nil {
			n++
			if first < 0 {
				first = k
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d searches could not be made (search %q: %w)",
		n, len(outcomes), r.Queries[pending[first]].Text, outcomes[first].Interrupted)
}

// allPaced reports whether every search of outcomes found nothing only
// because our shared rate limit had no room (SearchOutcome.Paced).
func allPaced(outcomes []SearchOutcome) bool {
	for _, out := range outcomes {
		if out.Paced == nil {
			return false
		}
	}
	return len(outcomes) > 0
}

// subQuestionTally renders, for the searches at idx, how many ran and how
// many results they returned per sub-question, e.g. "1: 2 searches, 9
// results; 2: …".
func (r *Run) subQuestionTally(idx []int) string {
	type tally struct{ searches, results int }
	by := map[int]*tally{}
	var keys []int
	for _, i := range idx {
		q := r.Queries[i]
		t, ok := by[q.SubQuestion]
		if !ok {
			t = &tally{}
			by[q.SubQuestion] = t
			keys = append(keys, q.SubQuestion)
		}
		t.searches++
		t.results += q.Results
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := fmt.Sprintf("sub-question %d", k)
		if k <= 0 || r.Plan == nil || k > len(r.Plan.SubQuestions) {
			name = "other"
		}
		parts = append(parts, fmt.Sprintf("%s: %s, %s", name, plural(by[k].searches, "search", "searches"), plural(by[k].results, "result", "results")))
	}
	return strings.Join(parts, "; ")
}

// plural writes n with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// onlyReformulations reports whether every search at idx rewrites an earlier one.
func (r *Run) onlyReformulations(idx []int) bool {
	for _, i := range idx {
		if r.Queries[i].ReformulationOf == "" {
			return false
		}
	}
	return len(idx) > 0
}

// poorQueries returns the searches whose results were all judged irrelevant
// (or that found nothing without an error), that are not rewrites themselves
// and were not considered for a rewrite before.
func (r *Run) poorQueries() []int {
	type judged struct {
		ranked    bool
		relevance float64
	}
	src := make(map[int]judged, len(r.Sources))
	for _, s := range r.Sources {
		src[s.ID] = judged{s.Ranked, s.Relevance}
	}
	var out []int
	for i, q := range r.Queries {
		if q.Status != queryCompleted || q.Reformulated || q.ReformulationOf != "" || len(q.Errors) > 0 {
			continue
		}
		if len(q.Hits) == 0 && q.Results > 0 {
			continue // its results were not recorded (a run saved before they were)
		}
		poor := true
		for _, id := range q.Hits {
			if j := src[id]; !j.ranked || j.relevance >= irrelevantBelow {
				poor = false
				break
			}
		}
		if poor {
			out = append(out, i)
		}
	}
	return out
}

// reformulate retries, once, the searches whose results were all
// irrelevant (or that found nothing), with one model call for all of them,
// and queues the retries. Each retry has another kind than its search had
// when the backends serve another (retryKind): the model's wording and kind,
// or, when the model gives none for a search, the same wording in the kind
// the rule chooses. It reports whether new searches were queued. Retrying is
// an aid: a failed call is recorded and the run goes on with what it found.
func (e *Engine) reformulate(ctx context.Context, r *Run) (bool, error) {
	if r.restrictedToNew() || r.searchStopped() || e.overBudget(r) {
		return false, nil
	}
	poor := r.poorQueries()
	if len(poor) == 0 {
		return false, nil
	}
	now := e.cfg.Clock.Now()
	qs := make([]Query, len(poor))
	for n, i := range poor {
		r.Queries[i].Reformulated = true
		qs[n] = r.Queries[i]
	}
	served := e.servedKinds()
	system, user := ReformulatorPrompt(r, qs, served)
	var out ReformulationOutput
	if err := e.generate(ctx, r, RolePlanner, "query_reformulation", system, user, &out); err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		r.recordError(now, StepRank, "llm", "rewriting searches that found nothing relevant failed; going on with what was found: "+err.Error())
		return false, nil
	}
	added := 0
	queue := func(old *Query, text, kind string) {
		q := Query{
			ID: fmt.Sprintf("q%d", len(r.Queries)+1), Text: text, Kind: kind,
			SubQuestion: old.SubQuestion, Round: old.Round, Status: queryPending, ReformulationOf: old.ID,
		}
		r.trace(now, StepRank, "search %s %q (%s) found nothing relevant; reformulated as %s search %q (%s)", old.ID, old.Text, normalizeKind(old.Kind), q.Kind, q.Text, q.ID)
		r.Queries = append(r.Queries, q)
		added++
	}
	for _, rq := range out.Queries {
		text := strings.TrimSpace(rq.Text)
		old := r.queryByID(strings.TrimSpace(rq.QueryID))
		if old == nil || !old.Reformulated || text == "" || r.reformulatedAlready(old.ID) {
			continue
		}
		kind := retryKind(old.Kind, rq.Kind, served)
		if strings.EqualFold(text, old.Text) && kind == normalizeKind(old.Kind) {
			continue // the same search again
		}
		queue(old, text, kind)
	}
	for _, i := range poor {
		old := &r.Queries[i]
		if r.reformulatedAlready(old.ID) {
			continue
		}
		if kind := retryKind(old.Kind, "", served); kind != normalizeKind(old.Kind) {
			queue(old, old.Text, kind) // the model gave no retry: the rule's
		}
	}
	return added > 0, nil
}

// queryByID returns the query with this id, or nil.
func (r *Run) queryByID(id string) *Query {
	for i := range r.Queries {
		if r.Queries[i].ID == id {
			return &r.Queries[i]
		}
	}
	return nil
}

// reformulatedAlready reports whether a rewrite of query id exists.
func (r *Run) reformulatedAlready(id string) bool {
	for _, q := range r.Queries {
		if q.ReformulationOf == id {
			return true
		}
	}
	return false
}

// hitsOf returns a search's results, most relevant first, for the rewrite
// prompt.
func (r *Run) hitsOf(q Query) []Source {
	var out []Source
	for _, id := range q.Hits {
		for _, s := range r.Sources {
			if s.ID == id {
				out = append(out, s)
			}
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Relevance > out[b].Relevance })
	return out[:min(len(out), reformulationResults)]
}

// evidenceMap says, per sub-question, which pages read were found by its
// searches ("Sub-question 1: pages 3, 5"), and which pages were found by
// searches of no sub-question; nil when no search recorded its results.
func (r *Run) evidenceMap(pages []Page) []string {
	inPrompt := map[int]bool{}
	for _, p := range pages {
		inPrompt[p.SourceID] = true
	}
	subs := planSubQuestions(r)
	by := make([][]int, len(subs)+1) // index 0: other
	placed := map[int]bool{}
	for _, q := range r.Queries {
		k := q.SubQuestion
		if k < 1 || k > len(subs) {
			k = 0
		}
		for _, id := range q.Hits {
			if inPrompt[id] && !slices.Contains(by[k], id) {
				by[k] = append(by[k], id)
				placed[id] = true
			}
		}
	}
	for _, p := range pages {
		if !placed[p.SourceID] && !slices.Contains(by[0], p.SourceID) {
			by[0] = append(by[0], p.SourceID)
		}
	}
	if len(placed) == 0 {
		return nil // no search recorded its results (a run from before they were)
	}
	var lines []string
	for k := 1; k <= len(subs); k++ {
		ids := "none"
		if len(by[k]) > 0 {
			sort.Ints(by[k])
			ids = joinInts(by[k])
		}
		lines = append(lines, fmt.Sprintf("Sub-question %d: pages %s", k, ids))
	}
	if len(by[0]) > 0 {
		sort.Ints(by[0])
		lines = append(lines, "Found by other searches: pages "+joinInts(by[0]))
	}
	return lines
}

// noteSearch keeps the backends' notes on what they left out, each once,
// and traces each new one.
func (r *Run) noteSearch(now time.Time, notes []string) {
	for _, n := range notes {
		n = flatLine(n)
		if n == "" || slices.Contains(r.SearchNotes, n) {
			continue
		}
		r.SearchNotes = append(r.SearchNotes, n)
		r.trace(now, StepSearch, "%s", n)
	}
}
