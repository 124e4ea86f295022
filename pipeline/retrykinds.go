package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// The searcher's rule for a poor search (seed 001: "If initial results are
// poor: … try a different search type (web vs academic)"): a search whose
// results were all judged irrelevant, or that found nothing, is retried once
// with another kind than it had, among those the configured backends serve.
// The model proposes the new wording and kind; when it keeps the kind, or
// names one no backend serves, the rule below chooses.

// KindsServer is optionally implemented by a Searcher that knows which query
// kinds (QueryKinds) its backends serve. A Searcher without it is taken to
// serve them all.
type KindsServer interface {
	// Kinds returns the kinds served, e.g. ["web", "academic"].
	Kinds() []string
}

// otherKinds says, per kind, which kinds a poor search of that kind is
// retried with, best first: web → academic, then news; academic → web, then
// news; news → web, then academic.
var otherKinds = map[string][]string{
	"web":      {"academic", "news"},
	"academic": {"web", "news"},
	"news":     {"web", "academic"},
}

// servedKinds returns the kinds the engine's searcher serves.
func (e *Engine) servedKinds() []string {
	ks, ok := e.cfg.Searcher.(KindsServer)
	if !ok {
		return QueryKinds
	}
	var out []string
	for _, k := range ks.Kinds() {
		if k = normalizeKind(k); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return QueryKinds
	}
	return out
}

// retryKind returns the kind a poor search of kind old is retried with: the
// model's proposal when it differs from old and is served, else the first
// served kind of otherKinds[old], else old (only one kind is served).
func retryKind(old, proposed string, served []string) string {
	old = normalizeKind(old)
	if p := strings.TrimSpace(proposed); p != "" {
		if k := normalizeKind(p); k != old && slices.Contains(served, k) {
			return k
		}
	}
	for _, k := range otherKinds[old] {
		if slices.Contains(served, k) {
			return k
		}
	}
	return old
}

// retryText describes a retried search for the trace and the report:
// `q3 "heat pump failure" (web) → academic "heat pump failure modes" (q6)`.
func retryText(old, q Query) string {
	return fmt.Sprintf("%s %q (%s) → %s %q (%s)", old.ID, flatLine(old.Text), normalizeKind(old.Kind), normalizeKind(q.Kind), flatLine(q.Text), q.ID)
}

// retriedSearches lists, for the report, each retried search with what its
// retry found: `q3 "…" (web) → academic "…" (q6): 2 results`.
func retriedSearches(r *Run) []string {
	var out []string
	for _, q := range r.Queries {
		if q.ReformulationOf == "" {
			continue
		}
		old := r.queryByID(q.ReformulationOf)
		if old == nil {
			continue
		}
		found := "not searched"
		if q.Status == queryCompleted || q.Status == queryFailed {
			found = plural(len(q.Hits), "result", "results")
		}
		out = append(out, retryText(*old, q)+": "+found)
	}
	return out
}
