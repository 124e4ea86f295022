package pipeline

// The output step: a run's latest draft turned into the final report, its
// confidence, metadata and the caveats for every bound the run hit; and the
// report of a stream run that found nothing new.

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Report statuses and confidences (seed 001 §4.4.2–4.4.3).
const (
	ReportComplete = "complete"
	ReportPartial  = "partial"

	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// highConfidenceScore is the final review score from which a complete
// report is given high confidence.
const highConfidenceScore = 8.0

// Fallback content limits.
const (
	fallbackSearchResults = 10 // top search results listed when nothing was read
	fallbackErrors        = 5  // last errors stated as caveats
	caveatBackendErrors   = 5  // distinct backend errors stated as caveats
)

// BuildReport is the output step: it turns the run's latest draft into the
// final report. A "Where sources disagree" section is added from the
// analysis, citing both sides of each disagreement. The content goes
// through CheckCitations and Number, so every reference is a page the run
// fetched; the draft's checked claims carry over with their reference
// numbers. Status is "complete"; confidence is high when the latest review
// of that draft scored 8 or more, else medium. Metadata and Provenance
// follow seed 001 §4.4.3 (queries executed, sub-questions and whether the
// sources answered them, claims verified, checkpoint decisions from the
// audit trail, the trace), sources a person marked relevant but the report
// does not cite are listed, and there is a caveat for every bound the run
// hit, backend errors, citations removed and unsupported claims. With no
// draft it returns BuildFallback. Report.Markdown is set. now may be zero
// (a preview before the run completes).
func BuildReport(r *Run, now time.Time) *Report {
	if len(r.Drafts) == 0 {
		return BuildFallback(r, "no draft was written", now)
	}
	d := r.Drafts[len(r.Drafts)-1]
	rep := &Report{Status: ReportComplete, Confidence: ConfidenceMedium}
	removed := fillFromDraft(rep, r, d)
	c := latestCritique(r, d.Version)
	if c != nil {
		rep.Metadata.FinalScore = c.Score
		if c.Score >= highConfidenceScore {
			rep.Confidence = ConfidenceHigh
		}
	}
	if removed > 0 {
		rep.Caveats = append(rep.Caveats, fmt.Sprintf("%d citation(s) or link(s) to material the run did not read were removed", removed))
	}
	rep.Caveats = append(rep.Caveats, boundCaveats(r)...)
	finishReport(rep, r, now)
	return rep
}

// fillFromDraft copies a draft, with the run's disagreements added as a
// section, checked and numbered into rep, and returns how many citations and
// links CheckCitations removed. The draft's claims come along with their
// sentences renumbered and their reference numbers; when they were checked,
// their tally goes into the provenance and unsupported ones into a caveat.
func fillFromDraft(rep *Report, r *Run, d Draft) int {
	if s, ok := disagreementSection(r.Analysis); ok {
		d.Sections = append(slices.Clone(d.Sections), s)
	}
	checked, notes := CheckCitations(d, r.Pages)
	numbered, refs, renumber := numberDraft(checked, r.Pages)
	rep.Title = numbered.Title
	rep.Abstract = numbered.Abstract
	rep.Sections = numbered.Sections
	rep.Conclusion = numbered.Conclusion
	rep.References = refs
	refOf := map[int]int{}
	for _, ref := range refs {
		refOf[ref.SourceID] = ref.N
	}
	for _, c := range d.Claims {
		if refOf[c.SourceID] == 0 {
			continue
		}
		c.Sentence, c.Ref = renumber(c.Sentence), refOf[c.SourceID]
		rep.Claims = append(rep.Claims, c)
	}
	if d.ClaimsChecked {
		t := TallyClaims(d.Claims)
		rep.Provenance.Claims = &t
		if t.Unsupported > 0 {
			rep.Caveats = append(rep.Caveats, fmt.Sprintf("%d of %d cited claims could not be verified against their sources: they are listed under “How this report was made”", t.Unsupported, t.Total))
		}
	}
	return len(notes)
}

// latestCritique returns the last critique of draft version v, else the last
// critique of any draft, else nil.
func latestCritique(r *Run, v int) *Critique {
	for i := len(r.Critiques) - 1; i >= 0; i-- {
		if r.Critiques[i].DraftVersion == v && r.Critiques[i].Human == "" {
			return &r.Critiques[i]
		}
	}
	for i := len(r.Critiques) - 1; i >= 0; i-- {
		if r.Critiques[i].Human == "" {
			return &r.Critiques[i]
		}
	}
	return nil
}

// finishReport fills Metadata, Provenance, AlsoRelevant and Markdown, and
// makes the slices non-nil so the JSON form is stable.
func finishReport(rep *Report, r *Run, now time.Time) {
	rep.Metadata.RunID = r.ID
	rep.Metadata.CreatedAt = r.CreatedAt
	rep.Metadata.CompletedAt = now
	rep.Metadata.Iterations = len(r.Drafts)
	rep.Metadata.SourcesUsed = len(rep.References)
	rep.Metadata.WordCount = reportWords(rep)
	rep.Metadata.CostUSD = r.Spend.CostUSD
	rep.Metadata.Tokens = r.Spend.PromptTokens + r.Spend.CompletionTokens
	claims := rep.Provenance.Claims
	rep.Provenance = provenance(r)
	rep.Provenance.Claims = claims
	if !rep.NothingNew {
		rep.AlsoRelevant = alsoRelevant(r, rep.References)
	}
	if rep.Sections == nil {
		rep.Sections = []Section{}
	}
	if rep.References == nil {
		rep.References = []Reference{}
	}
	rep.Markdown = RenderMarkdown(rep)
}

// reportWords counts the words of a report's abstract, sections and conclusion.
func reportWords(rep *Report) int {
	n := len(strings.Fields(rep.Abstract)) + len(strings.Fields(rep.Conclusion))
	for _, s := range rep.Sections {
		n += len(strings.Fields(s.Content))
	}
	return n
}

// boundCaveats states every bound the run hit, where people could not
// review it as intended, and the search and fetch problems it met.
func boundCaveats(r *Run) []string {
	var out []string
	for _, b := range r.Bounds {
		out = append(out, "Limit reached: "+flatLine(b))
	}
	for _, n := range r.ReviewNotes {
		out = append(out, flatLine(n))
	}
	var backend []string
	addBackend := func(msg string) {
		msg = flatLine(msg)
		if msg != "" && !slices.Contains(backend, msg) {
			backend = append(backend, msg)
		}
	}
	for _, q := range r.Queries {
		for _, e := range q.Errors {
			addBackend(e)
		}
	}
	fetchFailed := 0
	for _, e := range r.Errors {
		switch e.Kind {
		case "search":
			addBackend(e.Message)
		case "fetch":
			fetchFailed++
		}
	}
	for i, msg := range backend {
		if i == caveatBackendErrors {
			out = append(out, fmt.Sprintf("…and %d more search backend error(s)", len(backend)-caveatBackendErrors))
			break
		}
		out = append(out, "Search backend error: "+msg)
	}
	if n := max(fetchFailed, countFetchFailures(r)); n > 0 {
		out = append(out, fmt.Sprintf("%d page(s) could not be read", n))
	}
	return out
}

// countFetchFailures counts sources whose fetch failed.
func countFetchFailures(r *Run) int {
	n := 0
	for _, s := range r.Sources {
		if s.FetchErr != "" {
			n++
		}
	}
	return n
}

// NothingNewReport is the report of a research-stream run that found nothing
// material since r.Since (or since the previous digest when Since is zero):
// complete, NothingNew set, one line of content.
func NothingNewReport(r *Run, now time.Time) *Report {
	since := "the previous digest"
	if !r.Since.IsZero() {
		since = isoDate(r.Since)
	}
	rep := &Report{
		Status:     ReportComplete,
		Confidence: ConfidenceMedium,
		Title:      flatLine(r.Question),
		Abstract:   "Nothing material is new since " + since + ".",
		NothingNew: true,
	}
	rep.Caveats = boundCaveats(r)
	finishReport(rep, r, now)
	return rep
}
