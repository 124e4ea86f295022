package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
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

// provenance records what a report rests on.
func provenance(r *Run) Provenance {
	p := Provenance{Question: r.Question, SubQuestions: []string{}, Decisions: decisions(r), Trace: []string{}, Files: filesText(r.Files)}
	if r.Plan != nil {
		p.SubQuestions = slices.Clone(r.Plan.SubQuestions)
	}
	if r.Analysis != nil {
		p.Coverage = slices.Clone(r.Analysis.Coverage)
	}
	for _, q := range r.Queries {
		if q.Status == "completed" {
			p.QueriesExecuted++
		}
	}
	for _, t := range r.Trace {
		p.Trace = append(p.Trace, fmt.Sprintf("%s %s: %s", t.At.UTC().Format(time.RFC3339), t.Step, flatLine(t.Message)))
	}
	p.Unread = unread(r)
	p.Withheld = WithheldText(r.Withheld.Count)
	p.SearchNotes = slices.Clone(r.SearchNotes)
	p.Retried = retriedSearches(r)
	p.Steering = steeringProvenance(r)
	p.Clarified = clarifyProvenance(r)
	p.Evidence = GradeCounts(r.Analysis)
	return p
}

// maxUnreadListed bounds the unread sources a report names one by one.
const maxUnreadListed = 10

// unread names the sources whose reading failed, with the reason (an
// encrypted or scanned PDF, a timeout, …), without the "fetch <url>: "
// prefix the fetcher's errors carry; near-duplicates were read and are
// not listed.
func unread(r *Run) []string {
	var out []string
	n := 0
	for _, s := range r.Sources {
		if s.FetchErr == "" || strings.HasPrefix(s.FetchErr, "near-duplicate of ") {
			continue
		}
		if n++; n > maxUnreadListed {
			continue
		}
		why := strings.TrimPrefix(s.FetchErr, "fetch "+s.URL+": ")
		out = append(out, clipText(flatLine(strings.TrimSpace(s.URL)+" — "+why), 300))
	}
	if n > maxUnreadListed {
		out = append(out, fmt.Sprintf("…and %d more", n-maxUnreadListed))
	}
	return out
}

// decisions renders every checkpoint outcome of the run from the instances'
// audit trails: decisions (who, what, when, and a note), skips, timeouts and
// failures, in order.
func decisions(r *Run) []string {
	out := []string{}
	for _, inst := range r.Checkpoints {
		name := nonBlank(inst.DefinitionID, inst.Label)
		for _, a := range inst.Audit {
			var line string
			switch a.To {
			case checkpoints.StateSubmitted:
				action := "decided"
				if inst.Decision != nil {
					action = string(inst.Decision.Action)
				}
				line = fmt.Sprintf("%s: %s by %s", name, action, nonBlank(a.Actor, "unknown"))
				if len(a.Changes) > 0 {
					keys := make([]string, len(a.Changes))
					for i, ch := range a.Changes {
						keys[i] = ch.Key
					}
					line += " (changed " + strings.Join(keys, ", ") + ")"
				}
			case checkpoints.StateSkipped:
				line = name + ": skipped"
			case checkpoints.StateTimedOut:
				line = name + ": timed out"
			case checkpoints.StateFailed:
				line = name + ": failed"
			default:
				continue
			}
			if !a.At.IsZero() {
				line += " at " + a.At.UTC().Format(time.RFC3339)
			}
			if a.Note != "" {
				line += " — " + flatLine(a.Note)
			}
			out = append(out, line)
		}
	}
	return out
}

// alsoRelevant lists the sources a person marked relevant (and did not
// exclude later) that the report does not cite.
func alsoRelevant(r *Run, refs []Reference) []AlsoRelevant {
	cited := map[int]bool{}
	for _, ref := range refs {
		cited[ref.SourceID] = true
	}
	var out []AlsoRelevant
	for _, s := range r.Sources {
		if !s.Relevant || s.Excluded || cited[s.ID] {
			continue
		}
		out = append(out, AlsoRelevant{Title: flatLine(nonBlank(s.Title, hostDomain(s.URL))), URL: strings.TrimSpace(s.URL), Domain: hostDomain(s.URL), Read: s.Fetched})
	}
	return out
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

// RenderMarkdown renders a report as a Markdown document: the title, a
// status and caveats box (always for a partial report; for a complete one
// when it has caveats), the abstract, the sections, the conclusion, the
// numbered references as "[n] Title — domain (date) <URL>", the sources
// marked relevant but not cited ("Also relevant"), how the report was made,
// and a one-line metadata footer (run id, sources, iterations, score, cost).
// Each verified claim gets a footnote after its citation quoting the
// passage of the source that supports it. It is pure.
func RenderMarkdown(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", flatLine(nonBlank(rep.Title, "Research report")))
	switch {
	case rep.Status == ReportPartial:
		b.WriteString("> **Partial report**")
		if rep.Reason != "" {
			b.WriteString(": " + flatLine(rep.Reason))
		}
		fmt.Fprintf(&b, "\n> Confidence: %s\n", nonBlank(rep.Confidence, ConfidenceLow))
		for _, c := range rep.Caveats {
			b.WriteString("> - " + flatLine(c) + "\n")
		}
		b.WriteString("\n")
	case len(rep.Caveats) > 0:
		b.WriteString("> **Notes**\n")
		for _, c := range rep.Caveats {
			b.WriteString("> - " + flatLine(c) + "\n")
		}
		b.WriteString("\n")
	}
	notes := newFootnotes(rep)
	if a := strings.TrimSpace(notes.mark(PartAbstract, rep.Abstract)); a != "" {
		if rep.NothingNew {
			b.WriteString(a + "\n\n")
		} else {
			b.WriteString("## Abstract\n\n" + a + "\n\n")
		}
	}
	for i, s := range rep.Sections {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", flatLine(nonBlank(s.Title, "Section")), strings.TrimSpace(notes.mark(i, s.Content)))
	}
	if c := strings.TrimSpace(notes.mark(PartConclusion, rep.Conclusion)); c != "" {
		b.WriteString("## Conclusion\n\n" + c + "\n\n")
	}
	if len(rep.References) > 0 {
		b.WriteString("## References\n\n")
		for _, ref := range rep.References {
			if ref.File {
				fmt.Fprintf(&b, "[%d] %s — %s", ref.N, flatLine(ref.Title), ref.FileOrigin())
				if k := ref.KindText(); k != "" {
					b.WriteString(", " + k)
				}
				b.WriteString("\n")
				continue
			}
			if ref.Kind == KindWorkspace {
				// "[3] #infra — @dana, 2026-03-02 <permalink>"
				fmt.Fprintf(&b, "[%d] %s", ref.N, flatLine(ref.Title))
				if !ref.Published.IsZero() {
					fmt.Fprintf(&b, ", %s", isoDate(ref.Published))
				}
				fmt.Fprintf(&b, " <%s>\n", ref.URL)
				continue
			}
			fmt.Fprintf(&b, "[%d] %s — %s", ref.N, flatLine(nonBlank(ref.Title, ref.Domain)), ref.Domain)
			if k := ref.KindText(); k != "" {
				b.WriteString(", " + k)
			}
			if !ref.Published.IsZero() {
				fmt.Fprintf(&b, " (%s)", isoDate(ref.Published))
			}
			fmt.Fprintf(&b, " <%s>\n", ref.URL)
		}
		b.WriteString("\n")
	}
	notes.write(&b)
	if len(rep.AlsoRelevant) > 0 {
		b.WriteString("## Also relevant\n\nMarked relevant during the source review but not cited above:\n\n")
		for _, a := range rep.AlsoRelevant {
			fmt.Fprintf(&b, "- %s — %s <%s>", flatLine(nonBlank(a.Title, a.Domain)), a.Domain, a.URL)
			if !a.Read {
				b.WriteString(" (not read by this run)")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	writeProvenance(&b, rep)
	m := rep.Metadata
	b.WriteString("---\n")
	fmt.Fprintf(&b, "_Run %s · %d source(s) · %d iteration(s)", nonBlank(m.RunID, "-"), m.SourcesUsed, m.Iterations)
	if m.FinalScore > 0 {
		fmt.Fprintf(&b, " · score %.1f/10", m.FinalScore)
	}
	fmt.Fprintf(&b, " · %s_\n", FormatUSD(m.CostUSD))
	return b.String()
}

// writeProvenance adds how the report was made: the question as asked, the
// sub-questions, how many searches ran, and who decided what (seed 001 §4.4.3).
func writeProvenance(b *strings.Builder, rep *Report) {
	p, m := rep.Provenance, rep.Metadata
	if p.Question == "" && len(p.SubQuestions) == 0 {
		return
	}
	b.WriteString("## How this report was made\n\n")
	if p.Question != "" {
		fmt.Fprintf(b, "- Question: %s\n", flatLine(p.Question))
	}
	switch {
	case len(p.Coverage) > 0:
		b.WriteString("- Sub-questions, and whether the sources answered them:\n")
		for i, c := range p.Coverage {
			fmt.Fprintf(b, "  %d. %s — %s\n", i+1, flatLine(c.Question), CoverageText(c))
		}
	case len(p.SubQuestions) > 0:
		parts := make([]string, len(p.SubQuestions))
		for i, q := range p.SubQuestions {
			parts[i] = fmt.Sprintf("(%d) %s", i+1, flatLine(q))
		}
		fmt.Fprintf(b, "- Sub-questions: %s\n", strings.Join(parts, " "))
	}
	if p.Files != "" {
		fmt.Fprintf(b, "- %s\n", flatLine(p.Files))
	}
	fmt.Fprintf(b, "- %d searches run; %d sources cited\n", p.QueriesExecuted, m.SourcesUsed)
	if p.Evidence != "" {
		fmt.Fprintf(b, "- Evidence behind the key findings (strong: independent sources agree · moderate: two or three sources · weak: one source or conflicting ones · gap: none found): %s\n", p.Evidence)
	}
	if t := p.Claims; t != nil {
		fmt.Fprintf(b, "- %d cited claims checked against the text of their sources: %d verified by a quote found in the cited source (%.0f%% of its words or more; see the footnotes), %d unsupported\n",
			t.Total, t.Verified, 100*QuoteMatchThreshold, t.Unsupported)
		for _, g := range groupBySentence(Unsupported(rep.Claims)) {
			whys := make([]string, len(g))
			for i, c := range g {
				whys[i] = unsupportedWhy(c)
			}
			fmt.Fprintf(b, "  - Unsupported (%s): %s — %s\n", flatLine(g[0].Location), flatLine(g[0].Sentence), strings.Join(whys, "; "))
		}
	}
	if len(p.Unread) > 0 {
		b.WriteString("- Sources that could not be read, and why:\n")
		for _, u := range p.Unread {
			fmt.Fprintf(b, "  - %s\n", flatLine(u))
		}
	}
	if p.Withheld != "" {
		fmt.Fprintf(b, "- %s\n", p.Withheld)
	}
	for _, n := range p.SearchNotes {
		fmt.Fprintf(b, "- %s\n", flatLine(n))
	}
	if len(p.Retried) > 0 {
		b.WriteString("- Searches that found nothing relevant, retried once with another search type or wording:\n")
		for _, n := range p.Retried {
			fmt.Fprintf(b, "  - %s\n", flatLine(n))
		}
	}
	if len(p.Clarified) > 0 {
		b.WriteString("- Before the plan:\n")
		for _, c := range p.Clarified {
			fmt.Fprintf(b, "  - %s\n", flatLine(c))
		}
	}
	if len(p.Steering) > 0 {
		b.WriteString("- Steering notes given while it ran (each applied from the next step):\n")
		for _, n := range p.Steering {
			fmt.Fprintf(b, "  - %s\n", flatLine(n))
		}
	}
	for _, d := range p.Decisions {
		fmt.Fprintf(b, "- %s\n", flatLine(d))
	}
	if !m.CreatedAt.IsZero() && !m.CompletedAt.IsZero() {
		fmt.Fprintf(b, "- Started %s, finished %s\n", m.CreatedAt.UTC().Format("2006-01-02 15:04 MST"), m.CompletedAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	b.WriteString("\n")
}

// FormatUSD shows a spend: cents for a dollar or more, four decimals below
// that (so a cheap run does not read as free).
func FormatUSD(v float64) string {
	if v >= 1 || v == 0 {
		return fmt.Sprintf("$%.2f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}
