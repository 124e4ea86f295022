package pipeline

// The partial report (seed 001 §4.4.2) of a run that did not finish: the best
// content there is (the latest draft, the analysis, or the top search results)
// with its caveats.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// BuildFallback is the fallback step (seed 001 §4.4.2): a partial report
// with low confidence, the reason, and the best content available — the
// latest draft (with the caveat that it did not pass final review), else the
// analysis' findings, themes and gaps as sections, else the
// top search results as a list (not citations: they were not read), else
// nothing with a caveat; disagreements are added as in BuildReport. It adds
// the critical issue count of the latest
// review, every bound hit, backend errors and the last errors. Citations in
// the content go through CheckCitations and Number. Report.Markdown is set.
func BuildFallback(r *Run, reason string, now time.Time) *Report {
	rep := &Report{Status: ReportPartial, Confidence: ConfidenceLow, Reason: flatLine(reason)}
	switch {
	case len(r.Drafts) > 0:
		d := r.Drafts[len(r.Drafts)-1]
		rep.Caveats = append(rep.Caveats, fmt.Sprintf("Draft version %d did not pass final review", d.Version))
		removed := fillFromDraft(rep, r, d)
		if removed > 0 {
			rep.Caveats = append(rep.Caveats, fmt.Sprintf("%d citation(s) or link(s) to material the run did not read were removed", removed))
		}
	case r.Analysis != nil && (len(r.Analysis.Findings) > 0 || len(r.Analysis.Themes) > 0):
		fillFromDraft(rep, r, analysisDraft(r))
		rep.Caveats = append(rep.Caveats, "Writing did not complete; the analysis is given as it stands")
	case len(topSources(r, 1)) > 0:
		rep.Title = "Search results: " + flatLine(r.Question)
		rep.Sections = []Section{{Title: "Top search results", Content: searchResultList(topSources(r, fallbackSearchResults)), Citations: []int{}}}
		rep.Caveats = append(rep.Caveats, "Analysis did not complete; these search results were not read or verified")
	default:
		rep.Title = "No results: " + flatLine(r.Question)
		rep.Caveats = append(rep.Caveats, "The run stopped before it collected any material")
	}
	if c := lastCritique(r); c != nil {
		rep.Metadata.FinalScore = c.Score
		if n := severityCount(c.Items, severityCritical); n > 0 {
			rep.Caveats = append(rep.Caveats, fmt.Sprintf("%d critical issue(s) were identified in the last review", n))
		}
	}
	rep.Caveats = append(rep.Caveats, boundCaveats(r)...)
	errs := r.Errors[max(0, len(r.Errors)-fallbackErrors):]
	for _, e := range errs {
		msg := flatLine(e.Message)
		if slices.ContainsFunc(rep.Caveats, func(c string) bool { return strings.HasSuffix(c, ": "+msg) }) {
			continue // already stated as a backend error
		}
		rep.Caveats = append(rep.Caveats, fmt.Sprintf("Error during %s: %s", e.Step, msg))
	}
	finishReport(rep, r, now)
	return rep
}

// lastCritique returns the reviewer's latest critique, or nil.
func lastCritique(r *Run) *Critique {
	if len(r.Drafts) > 0 {
		return latestCritique(r, r.Drafts[len(r.Drafts)-1].Version)
	}
	return latestCritique(r, -1)
}

// analysisDraft turns the analysis into a draft whose sections are the
// findings (citing their sources), themes and open gaps (disagreements are
// added by fillFromDraft, as in every report).
func analysisDraft(r *Run) Draft {
	a := r.Analysis
	d := Draft{Title: "Research notes: " + flatLine(r.Question)}
	if len(a.Findings) > 0 {
		var b strings.Builder
		for _, f := range a.Findings {
			text := strings.TrimRight(flatLine(f.Text), ".")
			if len(f.Sources) > 0 {
				text += " [" + joinInts(f.Sources) + "]"
			}
			if g := GradeOf(f); g != "" {
				text += " (" + g + " evidence)"
			}
			b.WriteString("- " + text + ".")
			b.WriteString("\n")
		}
		d.Sections = append(d.Sections, Section{Title: "Key findings", Content: strings.TrimSpace(b.String())})
	}
	for _, part := range []struct {
		title string
		items []string
	}{{"Themes", a.Themes}, {"Open gaps", a.Gaps}} {
		if len(part.items) > 0 {
			d.Sections = append(d.Sections, Section{Title: part.title, Content: bulletLines(part.items)})
		}
	}
	return d
}

// topSources returns up to n sources not excluded by a person, best score
// first (ties by id).
func topSources(r *Run, n int) []Source {
	var out []Source
	for _, s := range r.Sources {
		if !s.Excluded {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Source) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out[:min(n, len(out))]
}

// searchResultList renders sources as a Markdown list with plain URLs.
func searchResultList(srcs []Source) string {
	var b strings.Builder
	for _, s := range srcs {
		fmt.Fprintf(&b, "- %s — %s", flatLine(nonBlank(s.Title, s.URL)), hostDomain(s.URL))
		if !s.Published.IsZero() {
			fmt.Fprintf(&b, " (%s)", isoDate(s.Published))
		}
		if g := flatLine(nonBlank(s.Gist, s.Snippet)); g != "" {
			b.WriteString(": " + clipText(g, 200))
		}
		fmt.Fprintf(&b, " <%s>\n", strings.TrimSpace(s.URL))
	}
	return strings.TrimSpace(b.String())
}
