package pipeline

// The prompts of the steps that compose the report: the analyst, the writer
// (first draft and revisions) and the reviewer, with the renderings of the
// analysis, drafts and critiques they are shown.

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// analystData is what the analyst templates see.
type analystData struct {
	Steering     []string // the run's steering notes, each in its requester_note block
	Today        string
	Question     string
	SubQuestions string
	Since        string
	Pages        []string
	IDs          string
	EvidenceMap  string
	SubCount     int
	PreviousGaps string
	GapRound     int
	MaxGapRounds int
}

// AnalystPrompt renders the analyst's prompt: the question, the plan's
// sub-questions and the evidence, one block per page keyed by source id
// (page text clipped to Limits.MaxSourceChars, default 6000). It asks for
// findings citing source ids, themes, contradictions, gaps, a confidence,
// sufficiency (sufficient, gaps_minor, gaps_major) and gap queries. With a
// plan, it maps the pages to the sub-questions whose searches found them and
// asks, per sub-question, whether the evidence answers it; contradictions
// come with both sides and their source ids. On a gap round it lists the
// previous analysis' gaps. Reply with AnalysisOutput.
func AnalystPrompt(r *Run, pages []Page) (system, user string) {
	maxGap := r.Limits.MaxGapRounds
	maxGap = cmp.Or(maxGap, 2)
	d := analystData{
		Steering:     steeringBlocks(r),
		Today:        runToday(r),
		Question:     untrustedBlock("question", r.Question),
		Since:        isoDate(r.Since),
		IDs:          joinInts(pageIDs(pages)),
		GapRound:     r.Counters.GapRounds,
		MaxGapRounds: max(maxGap, 0),
	}
	if sq := planSubQuestions(r); len(sq) > 0 {
		d.SubQuestions = untrustedBlock("sub_questions", numberedLines(sq))
		d.SubCount = len(sq)
		d.EvidenceMap = strings.Join(r.evidenceMap(pages), "\n")
	}
	for _, p := range pages {
		d.Pages = append(d.Pages, pageBlock(p, promptSourceChars(r)))
	}
	if r.Analysis != nil && len(r.Analysis.Gaps) > 0 {
		d.PreviousGaps = untrustedBlock("previous_gaps", bulletLines(r.Analysis.Gaps))
	}
	return renderPrompt("analyst", d)
}

// writerData is what the writer templates see.
type writerData struct {
	Steering    []string // the run's steering notes, each in its requester_note block
	Today       string
	Question    string
	Depth       Depth
	TargetWords int
	Analysis    string
	Sections    string
	Sources     string
	Excerpts    []string
	IDs         string
	BannedWords string
	Revision    bool
	Version     int
	PrevVersion int
	Previous    string
	Critiques   []string
	Feedback    []string
	StyleGuide  string
	MinQuote    int
	Disagree    string
}

// BannedWords returns the words the writer must never use (seed 001).
func BannedWords() []string {
	return []string{
		"delve", "realm", "harness", "unlock", "tapestry", "paradigm", "cutting-edge", "revolutionize",
		"landscape", "crucial", "pivotal", "groundbreaking", "leverage", "synergy", "innovative",
		"game-changer", "holistic", "transformative", "seamless", "robust", "breakthrough", "empower",
	}
}

// analysisText renders an analysis for a prompt (to be wrapped by the caller).
func analysisText(a *Analysis) string {
	if a == nil {
		return "(no analysis)"
	}
	var b strings.Builder
	b.WriteString("Key findings:\n")
	for i, f := range a.Findings {
		fmt.Fprintf(&b, "%d. %s", i+1, flatLine(f.Text))
		if len(f.Sources) > 0 {
			fmt.Fprintf(&b, " (sources: %s)", joinInts(f.Sources))
		}
		if g := GradeOf(f); g != "" {
			fmt.Fprintf(&b, " [evidence: %s]", g)
		}
		b.WriteString("\n")
	}
	if len(a.Themes) > 0 {
		b.WriteString("Themes:\n" + bulletLines(a.Themes) + "\n")
	}
	if len(a.Contradictions) > 0 {
		b.WriteString("Contradictions:\n")
		for _, c := range a.Contradictions {
			b.WriteString("- " + contradictionText(c) + "\n")
		}
	}
	if len(a.Coverage) > 0 {
		b.WriteString("Sub-questions answered by the evidence:\n")
		for i, c := range a.Coverage {
			fmt.Fprintf(&b, "%d. %s — %s", i+1, flatLine(c.Question), nonBlank(c.Status, "not assessed"))
			if len(c.Sources) > 0 {
				fmt.Fprintf(&b, " (sources: %s)", joinInts(c.Sources))
			}
			if c.Summary != "" {
				b.WriteString(": " + flatLine(c.Summary))
			}
			b.WriteString("\n")
		}
	}
	if len(a.Gaps) > 0 {
		b.WriteString("Gaps:\n" + bulletLines(a.Gaps) + "\n")
	}
	return b.String()
}

// contradictionText renders one disagreement on one line.
func contradictionText(c Contradiction) string {
	var b strings.Builder
	if c.Topic != "" {
		b.WriteString(flatLine(c.Topic) + ": ")
	}
	side := func(name string, s Side) {
		if s.Claim == "" && len(s.Sources) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s says %s", name, flatLine(nonBlank(s.Claim, "(not stated)")))
		if len(s.Sources) > 0 {
			fmt.Fprintf(&b, " (sources: %s)", joinInts(s.Sources))
		}
		b.WriteString("; ")
	}
	side("A", c.A)
	side("B", c.B)
	if c.Assessment != "" {
		b.WriteString("assessment: " + flatLine(c.Assessment) + "; ")
	}
	if c.Chosen != "" {
		fmt.Fprintf(&b, "the people who asked chose reading %s; ", strings.ToUpper(c.Chosen))
	}
	return strings.TrimSuffix(strings.TrimSpace(b.String()), ";")
}

// sourceList renders "[id] Title — domain (date)" lines for pages.
func sourceList(pages []Page) string {
	var b strings.Builder
	for _, p := range pages {
		fmt.Fprintf(&b, "[%d] %s — %s", p.SourceID, flatLine(nonBlank(p.Title, "(untitled)")), hostDomain(pageAddress(p)))
		if !p.Published.IsZero() {
			fmt.Fprintf(&b, " (%s)", isoDate(p.Published))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// draftText renders a draft for a prompt (to be wrapped by the caller).
func draftText(d Draft) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n## Abstract\n%s\n\n", flatLine(d.Title), strings.TrimSpace(d.Abstract))
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "## %s\n%s\n\n", flatLine(s.Title), strings.TrimSpace(s.Content))
	}
	fmt.Fprintf(&b, "## Conclusion\n%s\n", strings.TrimSpace(d.Conclusion))
	return b.String()
}

// critiqueText renders a critique for a prompt (to be wrapped by the
// caller), its items numbered as items numbers them (see numberedItems).
func critiqueText(c Critique, items []RevisionItem) string {
	var b strings.Builder
	if c.Human != "" {
		for _, it := range items {
			fmt.Fprintf(&b, "[%d] From a person: %s\n", it.N, it.Text)
		}
		return b.String()
	}
	if c.Score > 0 || len(c.Criteria) > 0 {
		fmt.Fprintf(&b, "Score: %.1f/10 (%s)\n", c.Score, c.Recommendation)
	}
	if c.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", flatLine(c.Summary))
	}
	for _, it := range items {
		fmt.Fprintf(&b, "[%d] %s [%s] at %s: %s", it.N, strings.ToUpper(nonBlank(it.Severity, "issue")), flatLine(it.Category), flatLine(nonBlank(it.Location, "general")), flatLine(it.Text))
		if it.Fix != "" {
			fmt.Fprintf(&b, " Fix: %s", flatLine(it.Fix))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writingTarget is the report length the writer aims at for r.
func writingTarget(r *Run) int {
	if r.Writing.TargetWords > 0 {
		return r.Writing.TargetWords
	}
	return targetWords(r.Depth)
}

// styleGuideBlock wraps r's style guide for a prompt, or "".
func styleGuideBlock(r *Run) string {
	if strings.TrimSpace(r.Writing.StyleGuide) == "" {
		return ""
	}
	return untrustedBlock("style_guide", r.Writing.StyleGuide)
}

// WriterPrompt renders the writer's prompt: the analysis, the expected
// sections, the Available Sources (the fetched pages, with excerpts), the
// citation rules (cite only as [n], n a source id from that list) and the
// evidence rule (a verbatim quote per cited sentence and source, checked by
// code), the banned words, the house style guide when set and a target
// length (Writing.TargetWords, else by depth). When r has a draft, it is in
// revision mode: it includes the latest draft, every critique of that draft
// (the reviewer's, code's evidence checks and people's, Critique.Human) with
// its items numbered, and unused human Feedback. Reply with DraftOutput.
func WriterPrompt(r *Run, pages []Page) (system, user string) {
	d := writerData{
		Steering:    steeringBlocks(r),
		Question:    untrustedBlock("question", r.Question),
		Depth:       depthName(r.Depth),
		TargetWords: writingTarget(r),
		Analysis:    untrustedBlock("analysis", analysisText(r.Analysis)),
		IDs:         joinInts(pageIDs(pages)),
		BannedWords: strings.Join(BannedWords(), ", "),
		Feedback:    feedbackBlocks(unusedFeedback(r)),
		Version:     len(r.Drafts) + 1,
		StyleGuide:  styleGuideBlock(r),
		MinQuote:    MinQuoteWords,
		Disagree:    DisagreementTitle,
	}
	d.Today = runToday(r)
	if r.Plan != nil && len(r.Plan.Sections) > 0 {
		d.Sections = untrustedBlock("expected_sections", numberedLines(r.Plan.Sections))
	}
	d.Sources = untrustedBlock("source_list", sourceList(pages))
	for _, p := range pages {
		d.Excerpts = append(d.Excerpts, pageBlock(p, promptSourceChars(r)/writerExcerptDivisor))
	}
	if n := len(r.Drafts); n > 0 {
		prev := r.Drafts[n-1]
		d.Revision = true
		d.PrevVersion = prev.Version
		d.Version = prev.Version + 1
		d.Previous = untrustedBlock("previous_draft", draftText(prev), "version", strconv.Itoa(prev.Version))
		next := 1
		for _, c := range r.Critiques {
			if c.DraftVersion == prev.Version {
				kind := "reviewer_critique"
				if c.Human != "" {
					kind = "human_critique"
				}
				items := numberedItems(c, next)
				next += len(items)
				d.Critiques = append(d.Critiques, untrustedBlock(kind, critiqueText(c, items)))
			}
		}
	}
	return renderPrompt("writer", d)
}

// reviewerData is what the reviewer templates see.
type reviewerData struct {
	Steering      []string // the run's steering notes, each in its requester_note block
	Today         string
	Iteration     int
	MaxIterations int
	Criteria      []Criterion
	Version       int
	SectionCount  int
	WordCount     int
	Draft         string
	Analysis      string
	Sources       string
	SubQuestions  string
	Sections      string
	Banned        string
	TargetWords   int
	StyleGuide    string
	Claims        ClaimTally
	ClaimsChecked bool
	Unsupported   string
	Threshold     int
	// The decision rules code applies (Recommend), stated to the model.
	PassThreshold  float64
	MaxMajorIssues int
}

// ReviewerPrompt renders the reviewer's prompt for draft d: the six weighted
// criteria and their checks, severity levels and scoring guidelines, the
// draft with its word count and target length, the house style guide when
// set, what code's check of the claims' quotes found (the unsupported claims
// are listed), the analysis and source list for fact-checking and the plan
// for completeness. The model returns per-criterion scores and issues
// (CritiqueOutput); code computes the weighted score and the decision.
func ReviewerPrompt(r *Run, d Draft) (system, user string) {
	data := reviewerData{
		Steering:       steeringBlocks(r),
		Iteration:      len(r.Drafts),
		MaxIterations:  revisionLimit(r),
		Criteria:       ReviewCriteria(),
		Version:        d.Version,
		SectionCount:   len(d.Sections),
		WordCount:      draftWords(d),
		Draft:          untrustedBlock("draft", draftText(d), "version", strconv.Itoa(d.Version)),
		Analysis:       untrustedBlock("analysis", analysisText(r.Analysis)),
		Sources:        untrustedBlock("source_list", sourceList(r.Pages)),
		Banned:         strings.Join(BannedWords(), ", "),
		TargetWords:    writingTarget(r),
		StyleGuide:     styleGuideBlock(r),
		Claims:         TallyClaims(d.Claims),
		ClaimsChecked:  d.ClaimsChecked,
		Threshold:      int(QuoteMatchThreshold * 100),
		PassThreshold:  PassThreshold,
		MaxMajorIssues: MaxMajorIssues,
	}
	if bad := Unsupported(d.Claims); len(bad) > 0 {
		var b strings.Builder
		for _, c := range bad {
			fmt.Fprintf(&b, "- at %s: %q cites source %d, but %s\n", flatLine(c.Location), flatLine(c.Sentence), c.SourceID, c.Reason)
		}
		data.Unsupported = untrustedBlock("unsupported_claims", b.String())
	}
	data.Iteration = cmp.Or(data.Iteration, 1)
	data.Today = runToday(r)
	if r.Plan != nil {
		data.SubQuestions = untrustedBlock("sub_questions", numberedLines(r.Plan.SubQuestions))
		if len(r.Plan.Sections) > 0 {
			data.Sections = untrustedBlock("expected_sections", numberedLines(r.Plan.Sections))
		}
	}
	return renderPrompt("reviewer", data)
}

// draftWords counts the words of a draft's abstract, sections and conclusion.
func draftWords(d Draft) int {
	n := len(strings.Fields(d.Abstract)) + len(strings.Fields(d.Conclusion))
	for _, s := range d.Sections {
		n += len(strings.Fields(s.Content))
	}
	return n
}
