package pipeline

// A report rendered as a Markdown document, with its provenance section and
// the spend shown in dollars.

import (
	"fmt"
	"strings"
)

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
