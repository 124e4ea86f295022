package pipeline

import (
	"bytes"
	"embed"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"
)

// promptFiles holds the prompt templates (prompts/*.tmpl). An embedded file
// system has to be a package-level variable; it is read-only.
//
//go:embed prompts/*.tmpl
var promptFiles embed.FS

// Prompt sizing. Page text is measured in characters; the estimator assumes
// four characters per token.
const (
	// defaultPromptSourceChars is the page text carried into the analyst's
	// prompt when Limits.MaxSourceChars is zero.
	defaultPromptSourceChars = 6000
	// writerExcerptDivisor: the writer sees page excerpts of
	// MaxSourceChars/writerExcerptDivisor characters; the analysis carries the rest.
	writerExcerptDivisor = 2
	// rankerSnippetChars bounds a search result's snippet in the ranker's prompt.
	rankerSnippetChars = 500
	// truncationMark ends page text that was cut short.
	truncationMark = "[…truncated]"
	// promptDateLayout is how dates are written in prompts and reports.
	promptDateLayout = "2006-01-02"
)

// DepthCounts returns how many sub-questions and search queries the planner
// is asked for at a depth: quick 3/5, standard 5/10, comprehensive 7/15.
// Unknown depths count as standard. The result always lies within 3–7
// sub-questions and 5–15 queries.
func DepthCounts(d Depth) (subQuestions, queries int) {
	switch d {
	case DepthQuick:
		subQuestions, queries = 3, 5
	case DepthComprehensive:
		subQuestions, queries = 7, 15
	default:
		subQuestions, queries = 5, 10
	}
	return min(max(subQuestions, 3), 7), min(max(queries, 5), 15)
}

// ---------------------------------------------------------------------------
// Untrusted text.

// untrustedDelimiter matches anything that could open or close an
// untrusted_data block, whatever its case or spacing.
const untrustedDelimiterPattern = `(?i)<(\s*/?\s*)(untrusted_data)`

// untrustedBlock wraps text in an <untrusted_data> block. kind and attrs are
// written by code (never from untrusted input); any delimiter inside text is
// neutralised ("<" becomes "&lt;") so the text cannot close the block or open
// a new one.
func untrustedBlock(kind string, text string, attrs ...string) string {
	var b strings.Builder
	b.WriteString(`<untrusted_data kind="`)
	b.WriteString(kind)
	b.WriteString(`"`)
	for i := 0; i+1 < len(attrs); i += 2 {
		fmt.Fprintf(&b, ` %s="%s"`, attrs[i], attrs[i+1])
	}
	b.WriteString(">\n")
	b.WriteString(neutralise(strings.TrimSpace(text)))
	b.WriteString("\n</untrusted_data>")
	return b.String()
}

// neutralise makes every occurrence of the untrusted_data delimiter in s
// harmless.
func neutralise(s string) string {
	return regexp.MustCompile(untrustedDelimiterPattern).ReplaceAllString(s, "&lt;$1$2")
}

// clipText returns s cut to at most n characters (runes) on a word boundary when
// possible, marking the cut; n <= 0 means no limit.
func clipText(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexAny(cut, " \n\t"); i > len(cut)*3/4 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " \n\t") + " " + truncationMark
}

// flatLine collapses all whitespace in s into single spaces.
func flatLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// hostDomain returns the host of a URL without a leading "www.", or "".
func hostDomain(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// isoDate formats t as YYYY-MM-DD, or "" for the zero time.
func isoDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(promptDateLayout)
}

// runToday is the date of the run's latest save (or creation), for prompts
// whose functions take no clock; "" when the run has neither.
func runToday(r *Run) string {
	if !r.UpdatedAt.IsZero() {
		return isoDate(r.UpdatedAt)
	}
	return isoDate(r.CreatedAt)
}

// promptSourceChars is the page text carried into an analyst prompt for r.
func promptSourceChars(r *Run) int {
	if r.Limits.MaxSourceChars > 0 {
		return r.Limits.MaxSourceChars
	}
	return defaultPromptSourceChars
}

// revisionLimit is r's revision bound with the default applied.
func revisionLimit(r *Run) int {
	if r.Limits.MaxIterations > 0 {
		return r.Limits.MaxIterations
	}
	return 3
}

// targetWords is the report length the writer aims at for a depth.
func targetWords(d Depth) int {
	switch d {
	case DepthQuick:
		return 800
	case DepthComprehensive:
		return 2500
	}
	return 1500
}

// unusedFeedback returns the people's notes not yet taken into account.
func unusedFeedback(r *Run) []Feedback {
	var out []Feedback
	for _, f := range r.Feedback {
		if !f.Used && strings.TrimSpace(f.Text) != "" {
			out = append(out, f)
		}
	}
	return out
}

// feedbackBlocks wraps each feedback note in its own untrusted block.
func feedbackBlocks(fs []Feedback) []string {
	var out []string
	for _, f := range fs {
		out = append(out, untrustedBlock("human_feedback", f.Text, "checkpoint", attrSafe(f.Checkpoint), "action", attrSafe(f.Action)))
	}
	return out
}

// attrSafe keeps only characters safe inside a double-quoted attribute written
// by code (letters, digits, '_', '-', '.').
func attrSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			return r
		}
		return -1
	}, s)
}

// numberedLines renders items as "1. item" lines.
func numberedLines(items []string) string {
	var b strings.Builder
	for i, s := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, flatLine(s))
	}
	return strings.TrimRight(b.String(), "\n")
}

// bulletLines renders items as "- item" lines.
func bulletLines(items []string) string {
	var b strings.Builder
	for _, s := range items {
		fmt.Fprintf(&b, "- %s\n", flatLine(s))
	}
	return strings.TrimRight(b.String(), "\n")
}

// joinInts renders ids as "1, 2, 3".
func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}

// renderPrompt executes the named system and user templates with data.
// Templates are embedded and covered by golden tests, so a failure is a
// programming error and panics.
func renderPrompt(name string, data any) (system, user string) {
	t := template.Must(template.New("prompts").ParseFS(promptFiles, "prompts/*.tmpl"))
	exec := func(n string) string {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, n, data); err != nil {
			panic(fmt.Sprintf("pipeline: prompt template %s: %v", n, err))
		}
		return strings.TrimSpace(b.String()) + "\n"
	}
	return exec(name + "_system"), exec(name + "_user")
}

// ---------------------------------------------------------------------------
// Prompts.

// plannerData is what the planner templates see; every untrusted value is
// already wrapped.
type plannerData struct {
	Today        string
	Question     string
	Context      string
	Depth        Depth
	SubQuestions int
	Queries      int
	Since        string
	Round        int
	PreviousPlan string
	Feedback     []string
}

// PlannerPrompt renders the planner's prompt for r: the question, its
// context and depth (which fixes how many sub-questions and queries to
// write), the date window when r.Since is set and today's date. When
// re-planning (r.Plan is set) it includes the previous plan and queries and
// every unused human Feedback note. Reply with PlanOutput.
func PlannerPrompt(r *Run, now time.Time) (system, user string) {
	sq, q := DepthCounts(r.Depth)
	d := plannerData{
		Today:        now.UTC().Format(promptDateLayout),
		Question:     untrustedBlock("question", r.Question),
		Depth:        depthName(r.Depth),
		SubQuestions: sq,
		Queries:      q,
		Since:        isoDate(r.Since),
		Round:        r.Counters.PlanRounds + 1,
		Feedback:     feedbackBlocks(unusedFeedback(r)),
	}
	if strings.TrimSpace(r.Context) != "" {
		d.Context = untrustedBlock("context", r.Context)
	}
	if r.Plan != nil {
		var b strings.Builder
		b.WriteString("Sub-questions:\n" + numberedLines(r.Plan.SubQuestions) + "\n")
		if len(r.Queries) > 0 {
			b.WriteString("Search queries:\n")
			for _, qq := range r.Queries {
				fmt.Fprintf(&b, "- [%s] %s\n", flatLine(qq.Kind), flatLine(qq.Text))
			}
		}
		if len(r.Plan.Sections) > 0 {
			b.WriteString("Sections:\n" + numberedLines(r.Plan.Sections) + "\n")
		}
		if r.Plan.Methodology != "" {
			b.WriteString("Methodology: " + flatLine(r.Plan.Methodology) + "\n")
		}
		d.PreviousPlan = untrustedBlock("previous_plan", b.String())
	}
	return renderPrompt("planner", d)
}

// depthName returns d when it is a known depth, else standard (the depth
// is written into prompts outside any untrusted block).
func depthName(d Depth) Depth {
	switch d {
	case DepthQuick, DepthComprehensive:
		return d
	}
	return DepthStandard
}

// rankerData is what the ranker templates see.
type rankerData struct {
	Question     string
	SubQuestions string
	Results      []string
	IDs          string
}

// RankerPrompt renders the ranker's prompt for one batch of search results:
// for each source id a relevance judgement from 0 to 1 and a one-line gist.
// Reply with RankOutput.
func RankerPrompt(question string, subQuestions []string, batch []Source) (system, user string) {
	d := rankerData{Question: untrustedBlock("question", question)}
	if len(subQuestions) > 0 {
		d.SubQuestions = untrustedBlock("sub_questions", numberedLines(subQuestions))
	}
	ids := make([]int, 0, len(batch))
	for _, s := range batch {
		ids = append(ids, s.ID)
		var b strings.Builder
		fmt.Fprintf(&b, "Title: %s\nURL: %s\n", flatLine(s.Title), flatLine(s.URL))
		if s.Kind != "" {
			fmt.Fprintf(&b, "Type: %s\n", flatLine(s.Kind))
		}
		if !s.Published.IsZero() {
			fmt.Fprintf(&b, "Published: %s\n", isoDate(s.Published))
		}
		if s.Citations > 0 {
			fmt.Fprintf(&b, "Cited by: %d\n", s.Citations)
		}
		fmt.Fprintf(&b, "Snippet: %s", clipText(flatLine(s.Snippet), rankerSnippetChars))
		d.Results = append(d.Results, untrustedBlock("search_result", b.String(), "source_id", strconv.Itoa(s.ID)))
	}
	d.IDs = joinInts(ids)
	return renderPrompt("ranker", d)
}

// analystData is what the analyst templates see.
type analystData struct {
	Today        string
	Question     string
	SubQuestions string
	Since        string
	Pages        []string
	IDs          string
	PreviousGaps string
	GapRound     int
	MaxGapRounds int
}

// pageBlock wraps one page's title, URL, date and text (clipped to chars).
func pageBlock(p Page, chars int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Title: %s\nURL: %s\n", flatLine(p.Title), flatLine(pageAddress(p)))
	if !p.Published.IsZero() {
		fmt.Fprintf(&b, "Published: %s\n", isoDate(p.Published))
	}
	if p.Author != "" {
		fmt.Fprintf(&b, "Author: %s\n", flatLine(p.Author))
	}
	b.WriteString("\n")
	text := clipText(strings.TrimSpace(p.Text), chars)
	if p.Truncated && !strings.HasSuffix(text, truncationMark) {
		text += " " + truncationMark
	}
	b.WriteString(text)
	return untrustedBlock("web_page", b.String(), "source_id", strconv.Itoa(p.SourceID))
}

// pageAddress is the address a page's content was read from.
func pageAddress(p Page) string {
	if p.FinalURL != "" {
		return p.FinalURL
	}
	return p.URL
}

// pageIDs lists the pages' source ids in order.
func pageIDs(pages []Page) []int {
	ids := make([]int, len(pages))
	for i, p := range pages {
		ids[i] = p.SourceID
	}
	return ids
}

// planSubQuestions returns the plan's sub-questions, or nil.
func planSubQuestions(r *Run) []string {
	if r.Plan == nil {
		return nil
	}
	return r.Plan.SubQuestions
}

// AnalystPrompt renders the analyst's prompt: the question, the plan's
// sub-questions and the evidence, one block per page keyed by source id
// (page text clipped to Limits.MaxSourceChars, default 6000). It asks for
// findings citing source ids, themes, contradictions, gaps, a confidence,
// sufficiency (sufficient, gaps_minor, gaps_major) and gap queries. On a gap
// round it lists the previous analysis' gaps. Reply with AnalysisOutput.
func AnalystPrompt(r *Run, pages []Page) (system, user string) {
	maxGap := r.Limits.MaxGapRounds
	if maxGap == 0 {
		maxGap = 2
	}
	d := analystData{
		Today:        runToday(r),
		Question:     untrustedBlock("question", r.Question),
		Since:        isoDate(r.Since),
		IDs:          joinInts(pageIDs(pages)),
		GapRound:     r.Counters.GapRounds,
		MaxGapRounds: max(maxGap, 0),
	}
	if sq := planSubQuestions(r); len(sq) > 0 {
		d.SubQuestions = untrustedBlock("sub_questions", numberedLines(sq))
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
		if f.Confidence != "" {
			fmt.Fprintf(&b, " [confidence: %s]", flatLine(f.Confidence))
		}
		b.WriteString("\n")
	}
	if len(a.Themes) > 0 {
		b.WriteString("Themes:\n" + bulletLines(a.Themes) + "\n")
	}
	if len(a.Contradictions) > 0 {
		b.WriteString("Contradictions:\n" + bulletLines(a.Contradictions) + "\n")
	}
	if len(a.Gaps) > 0 {
		b.WriteString("Gaps:\n" + bulletLines(a.Gaps) + "\n")
	}
	return b.String()
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

// nonBlank returns s, or def when s is blank.
func nonBlank(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
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

// critiqueText renders a critique for a prompt (to be wrapped by the caller).
func critiqueText(c Critique) string {
	var b strings.Builder
	if c.Human != "" {
		fmt.Fprintf(&b, "From a person: %s\n", strings.TrimSpace(c.Human))
	}
	if c.Score > 0 || len(c.Criteria) > 0 {
		fmt.Fprintf(&b, "Score: %.1f/10 (%s)\n", c.Score, c.Recommendation)
	}
	if c.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", flatLine(c.Summary))
	}
	for _, sev := range []string{severityCritical, severityMajor, severityMinor, severitySuggestion} {
		for _, it := range c.Items {
			if !strings.EqualFold(it.Severity, sev) {
				continue
			}
			fmt.Fprintf(&b, "- %s [%s] at %s: %s", strings.ToUpper(sev), flatLine(it.Category), flatLine(nonBlank(it.Location, "general")), flatLine(it.Description))
			if it.SuggestedFix != "" {
				fmt.Fprintf(&b, " Fix: %s", flatLine(it.SuggestedFix))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// WriterPrompt renders the writer's prompt: the analysis, the expected
// sections, the Available Sources (the fetched pages, with excerpts) and the
// citation rules (cite only as [n], n a source id from that list), the banned
// words and a target length by depth. When r has a draft, it is in revision
// mode: it includes the latest draft, every critique of that draft (the
// reviewer's and people's, Critique.Human) and unused human Feedback. Reply
// with DraftOutput.
func WriterPrompt(r *Run, pages []Page) (system, user string) {
	d := writerData{
		Question:    untrustedBlock("question", r.Question),
		Depth:       depthName(r.Depth),
		TargetWords: targetWords(r.Depth),
		Analysis:    untrustedBlock("analysis", analysisText(r.Analysis)),
		IDs:         joinInts(pageIDs(pages)),
		BannedWords: strings.Join(BannedWords(), ", "),
		Feedback:    feedbackBlocks(unusedFeedback(r)),
		Version:     len(r.Drafts) + 1,
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
		for _, c := range r.Critiques {
			if c.DraftVersion == prev.Version {
				kind := "reviewer_critique"
				if c.Human != "" {
					kind = "human_critique"
				}
				d.Critiques = append(d.Critiques, untrustedBlock(kind, critiqueText(c)))
			}
		}
	}
	return renderPrompt("writer", d)
}

// reviewerData is what the reviewer templates see.
type reviewerData struct {
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
}

// ReviewerPrompt renders the reviewer's prompt for draft d: the six weighted
// criteria and their checks, severity levels and scoring guidelines, the
// draft, the analysis and source list for fact-checking and the plan for
// completeness. The model returns per-criterion scores and issues
// (CritiqueOutput); code computes the weighted score and the decision.
func ReviewerPrompt(r *Run, d Draft) (system, user string) {
	data := reviewerData{
		Iteration:     len(r.Drafts),
		MaxIterations: revisionLimit(r),
		Criteria:      ReviewCriteria(),
		Version:       d.Version,
		SectionCount:  len(d.Sections),
		WordCount:     draftWords(d),
		Draft:         untrustedBlock("draft", draftText(d), "version", strconv.Itoa(d.Version)),
		Analysis:      untrustedBlock("analysis", analysisText(r.Analysis)),
		Sources:       untrustedBlock("source_list", sourceList(r.Pages)),
		Banned:        strings.Join(BannedWords(), ", "),
	}
	if data.Iteration == 0 {
		data.Iteration = 1
	}
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
