package blockkit

// The body of each kind of checkpoint message, read from its payload: the plan,
// the ranked sources, the draft with its evidence and disagreements, and the
// reviewer's critical issues.

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// planBody shows the plan: numbered sub-questions and queries, the
// sections, the method, warnings and the estimate.
func planBody(p pipeline.PlanPayload) []slack.Block {
	var blocks []slack.Block
	intro := "*Question:* " + EscapeTruncate(OneLine(p.Question), 1500)
	if p.Round > 1 {
		intro += fmt.Sprintf("\n_Revised plan (round %d)._", p.Round)
	}
	blocks = append(blocks, Section(intro))
	lines := make([]string, 0, len(p.SubQuestions))
	for i, q := range p.SubQuestions {
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, EscapeTruncate(OneLine(q), 400)))
	}
	blocks = append(blocks, packLines("*Sub-questions*\n", lines, 4, moreInEdit)...)
	lines = lines[:0]
	for i, q := range p.Queries {
		kind := q.Kind
		kind = cmp.Or(kind, "web")
		lines = append(lines, fmt.Sprintf("%d. `%s` %s", i+1, Escape(Truncate(OneLine(kind), 12)), EscapeTruncate(OneLine(q.Text), 300)))
	}
	if len(lines) > 0 {
		blocks = append(blocks, packLines("*Search queries*\n", lines, 4, moreInEdit)...)
	}
	var more []string
	if len(p.Sections) > 0 {
		s := make([]string, 0, len(p.Sections))
		for _, t := range p.Sections {
			s = append(s, EscapeTruncate(OneLine(t), 100))
		}
		more = append(more, "*Report sections:* "+strings.Join(s, " · "))
	}
	if p.Methodology != "" {
		more = append(more, "*Method:* "+EscapeTruncate(OneLine(p.Methodology), 800))
	}
	if p.Domains != "" {
		more = append(more, "*Sources:* "+EscapeTruncate(OneLine(p.Domains), 1200))
	}
	if f := pipeline.FilesAttached(p.Files); f != "" {
		more = append(more, "*Files:* "+Escape(f))
	}
	if a := assumptionsLine(p.Assumptions); a != "" {
		more = append(more, a)
	}
	if len(more) > 0 {
		blocks = append(blocks, Section(CutRunes(strings.Join(more, "\n"), SectionBudget)))
	}
	for i, w := range p.Warnings {
		if i == 3 {
			blocks = append(blocks, ContextText(fmt.Sprintf(":warning: …and %d more warnings", len(p.Warnings)-3)))
			break
		}
		blocks = append(blocks, ContextText(":warning: "+EscapeTruncate(OneLine(w), 500)))
	}
	blocks = append(blocks, ContextText(estimateLine(p.Estimate)))
	return blocks
}

// estimateLine is the cost and time estimate of a plan.
func estimateLine(e pipeline.Estimate) string {
	parts := []string{"*Estimate:* ~" + money(e.CostUSD), "~" + Duration(e.Duration)}
	if e.Searches > 0 {
		parts = append(parts, Count(e.Searches)+" searches")
	}
	if e.PagesToRead > 0 {
		parts = append(parts, Count(e.PagesToRead)+" pages to read")
	}
	if e.LLMCalls > 0 {
		parts = append(parts, Count(e.LLMCalls)+" model calls")
	}
	if e.Tokens > 0 {
		parts = append(parts, "~"+Count(e.Tokens)+" tokens")
	}
	return strings.Join(parts, " · ")
}

// moreInEdit names what was left out of a list.
func moreInEdit(left int) string {
	return fmt.Sprintf("_…and %d more — the full list is in the Edit form._", left)
}

// sourcesBody shows the ranked sources.
func sourcesBody(p pipeline.SourcesPayload) []slack.Block {
	intro := fmt.Sprintf("*Question:* %s\nI found *%s* sources; these are the best %s. The top %s will be read unless you change the selection.",
		EscapeTruncate(OneLine(p.Question), 1000), Count(p.Total), Count(len(p.Sources)), Count(p.ToFetch))
	blocks := []slack.Block{Section(intro)}
	var lines []string
	for i, s := range p.Sources {
		if i == maxListedSources {
			break
		}
		mark := ""
		if s.Relevant {
			mark = " :star:"
		}
		meta := []string{Escape(Truncate(FirstNonEmpty(s.Domain, domainOf(s.URL)), 80))}
		if !s.Published.IsZero() {
			meta = append(meta, s.Published.UTC().Format("2006-01-02"))
		}
		if s.Kind != "" {
			meta = append(meta, Escape(Truncate(s.Kind, 20)))
		}
		meta = append(meta, fmt.Sprintf("score %.2f", s.Score))
		line := fmt.Sprintf("*%d.* %s%s\n      %s", i+1, mdLink(s.URL, FirstNonEmpty(s.Title, s.URL), 150), mark, strings.Join(meta, " · "))
		if g := OneLine(s.Gist); g != "" {
			line += "\n      _" + EscapeTruncate(g, 200) + "_"
		}
		lines = append(lines, line)
	}
	blocks = append(blocks, packLines("", lines, 8, moreInEdit)...)
	if n := len(p.Sources) - maxListedSources; n > 0 {
		blocks = append(blocks, ContextText(fmt.Sprintf("…and %d more ranked sources — choose among all of them in the Edit form.", n)))
	}
	if len(p.Errors) > 0 {
		errs := make([]string, 0, len(p.Errors))
		for _, e := range p.Errors {
			errs = append(errs, EscapeTruncate(OneLine(e), 200))
		}
		blocks = append(blocks, ContextText(":warning: Some searches failed: "+strings.Join(errs, "; ")))
	}
	return blocks
}

// draftBody shows the draft summary and the reviewer's verdict.
func draftBody(p pipeline.DraftPayload) []slack.Block {
	blocks := []slack.Block{Section(fmt.Sprintf("*%s*\n_Draft %d_ · %s words · %s sources",
		EscapeTruncate(OneLine(FirstNonEmpty(p.Title, "Untitled draft")), 300), p.Version, Count(p.WordCount), Count(p.Sources)))}
	md := NewMarkdownBudget() // the draft's summary first, then the reviewer's
	if a := strings.TrimSpace(p.Abstract); a != "" {
		blocks = append(blocks, md.Block("Summary", a, nil, 2000))
	}
	if len(p.Sections) > 0 {
		s := make([]string, 0, len(p.Sections))
		for i, t := range p.Sections {
			s = append(s, fmt.Sprintf("%d. %s", i+1, MarkdownLine(t, nil, 150)))
		}
		blocks = append(blocks, packLines("*Sections*\n", s, 2, moreInEdit)...)
	}
	if p.NotPassed {
		blocks = append(blocks, Section(fmt.Sprintf(":warning: *The reviewer did not pass this draft* (score %.1f/10, recommends _%s_). It is yours to judge: *%s* (the report will say the reviewer did not pass it), *%s* (say what to change), or *%s* (a partial report).",
			p.Score, Escape(Truncate(p.Recommendation, 30)), pipeline.ChoicePublishCaveat, pipeline.ChoiceReviseMine, pipeline.ChoiceStop)))
		if p.AtRevisionLimit {
			blocks = append(blocks, ContextText("The revision limit is reached: changes asked for now end the run with a partial report that says so."))
		}
	}
	verdict := fmt.Sprintf("*Reviewer:* score *%.1f*/10", p.Score)
	if p.Recommendation != "" {
		verdict += " · recommends _" + Escape(Truncate(p.Recommendation, 30)) + "_"
	}
	verdict += fmt.Sprintf(" · %d major, %d minor issues", p.Major, p.Minor)
	blocks = append(blocks, Section(verdict))
	if s := strings.TrimSpace(p.Summary); s != "" {
		blocks = append(blocks, md.Block("", s, nil, 1500))
	}
	blocks = append(blocks, evidenceBlocks(p.Claims)...)
	if p.Diff != nil {
		blocks = append(blocks, Section(fmt.Sprintf("*Changes from draft %d:* %s", p.Diff.From, EscapeTruncate(p.Diff.Summary(), 1500))))
	}
	blocks = append(blocks, disagreementBlocks(p.Disagreements)...)
	if line := pipeline.CoverageSummary(p.Coverage); line != "" {
		blocks = append(blocks, ContextText(CutRunes(Escape(line), MaxContextText)))
	}
	if p.Evidence != "" {
		blocks = append(blocks, ContextText("*Evidence behind the key findings:* "+EscapeTruncate(p.Evidence, 300)))
	}
	if p.Markdown != "" {
		blocks = append(blocks, ContextText("The whole draft is attached to this thread as a Markdown file; the final report will be attached the same way."))
	}
	return blocks
}

// evidenceBlocks shows how the draft's claims fared when their quotes were
// checked against the sources, and lists the unsupported ones.
func evidenceBlocks(c pipeline.ClaimSummary) []slack.Block {
	if !c.Checked {
		return nil
	}
	head := "*Evidence:* " + Escape(c.ClaimTally.String())
	if c.Total > 0 && c.ClaimTally.Unsupported == 0 {
		head += " — every cited claim's quote was found in its source"
	}
	lines := make([]string, 0, len(c.Unsupported))
	for _, u := range c.Unsupported {
		line := fmt.Sprintf(":warning: _%s_ — “%s”", EscapeTruncate(OneLine(u.Location), 80), MarkdownLine(u.Sentence, nil, 300))
		for _, s := range append([]pipeline.ClaimView{u}, u.Also...) {
			line += fmt.Sprintf("\n      cites %s: %s", EscapeTruncate(OneLine(s.Source), 100), MarkdownLine(s.Reason, nil, 200))
		}
		lines = append(lines, line)
	}
	more := func(left int) string {
		return fmt.Sprintf("_…and %d more unsupported claims — see the draft file in this thread._", left)
	}
	blocks := packLines(head, lines, 3, more)
	if n := c.Unlisted(); n > 0 {
		blocks = append(blocks, ContextText(more(n)))
	}
	return blocks
}

// disagreementBlocks shows where the sources disagree, both sides with
// their sources, so the person can choose the reading the report takes.
func disagreementBlocks(ds []pipeline.DisagreementView) []slack.Block {
	if len(ds) == 0 {
		return nil
	}
	side := func(label string, s pipeline.SideView, chosen bool) string {
		names := make([]string, 0, len(s.Sources))
		for _, src := range s.Sources {
			names = append(names, "_"+EscapeTruncate(OneLine(src.Title), 80)+"_")
		}
		line := fmt.Sprintf("      *%s:* %s — %s", label, MarkdownLine(s.Claim, nil, 300), strings.Join(names, ", "))
		if chosen {
			line += " :white_check_mark: chosen"
		}
		return line
	}
	lines := make([]string, 0, len(ds))
	for _, d := range ds {
		l := fmt.Sprintf("*%d. %s*\n%s\n%s", d.N, EscapeTruncate(OneLine(FirstNonEmpty(d.Topic, "Disagreement")), 150),
			side("A", d.A, d.Chosen == pipeline.ReadingA), side("B", d.B, d.Chosen == pipeline.ReadingB))
		if d.Assessment != "" {
			l += "\n      _Assessment:_ " + MarkdownLine(d.Assessment, nil, 400)
		}
		lines = append(lines, l)
	}
	head := "*Where sources disagree* — choose the reading the report should take with *Edit*, or leave it to the writer:"
	return packLines(head, lines, 4, func(left int) string { return fmt.Sprintf("_…and %d more — all are in the Edit form._", left) })
}

// criticalBody shows the critical issues the reviewer found.
func criticalBody(p pipeline.CriticalPayload) []slack.Block {
	blocks := []slack.Block{Section(fmt.Sprintf("The reviewer found critical issues in draft %d, *%s* (score %.1f/10). *Revise with these issues* (with a note for the writer if you like), *publish it as it is*, or *stop* and get a report of what the run has.",
		p.Version, EscapeTruncate(OneLine(FirstNonEmpty(p.Title, "Untitled")), 300), p.Score))}
	var lines []string
	for i, it := range p.Items {
		if i == maxListedItems {
			break
		}
		line := fmt.Sprintf("%d. *%s* · %s", i+1, Escape(Truncate(it.Severity, 20)), Escape(Truncate(it.Category, 30)))
		if it.Location != "" {
			line += " · _" + EscapeTruncate(OneLine(it.Location), 100) + "_"
		}
		line += "\n      " + MarkdownLine(it.Description, nil, 500)
		if it.SuggestedFix != "" {
			line += "\n      _Fix:_ " + MarkdownLine(it.SuggestedFix, nil, 300)
		}
		lines = append(lines, line)
	}
	blocks = append(blocks, packLines("", lines, 8, func(left int) string { return fmt.Sprintf("_…and %d more issues._", left) })...)
	if n := len(p.Items) - maxListedItems; n > 0 {
		blocks = append(blocks, ContextText(fmt.Sprintf("…and %d more issues.", n)))
	}
	return blocks
}
