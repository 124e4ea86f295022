package pipeline

import (
	"bytes"
	"embed"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
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
// untrusted_data block or a requester_note block, whatever its case or
// spacing.
const untrustedDelimiterPattern = `(?i)<(\s*/?\s*)(untrusted_data|requester_note)`

// untrustedDelimiterRE is untrustedDelimiterPattern compiled once.
var untrustedDelimiterRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(untrustedDelimiterPattern) })

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
	return untrustedDelimiterRE().ReplaceAllString(s, "&lt;$1$2")
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

// hostDomain names where a source comes from, as citations and source lists
// show it: the host of a URL without a leading "www.", "MCP server <name>"
// for an MCP server's result (mcp://<name>/<id>), "internal documents
// (<folder>)" for a document of the collection (docs://<folder>/<path>), or "".
func hostDomain(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	if u.Scheme == "mcp" && u.Host != "" {
		return "MCP server " + strings.ToLower(u.Host)
	}
	if u.Scheme == "docs" && u.Host != "" {
		return "internal documents (" + strings.ToLower(u.Host) + ")"
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

// promptTemplates parses the embedded prompt templates, once.
var promptTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("prompts").ParseFS(promptFiles, "prompts/*.tmpl"))
})

// renderPrompt executes the named system and user templates with data.
// Templates are embedded and covered by golden tests, so a failure is a
// programming error and panics.
func renderPrompt(name string, data any) (system, user string) {
	t := promptTemplates()
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
	Steering     []string // the run's steering notes, each in its requester_note block
	Today        string
	Question     string
	Context      string
	Depth        Depth
	SubQuestions int
	Queries      int
	Since        string
	Round        int
	History      string
	Feedback     []string
	// MayAsk: the planner may give clarifying questions (the run can
	// still ask them); Clarification is the questions asked and the
	// person's answers, wrapped ("" for none).
	MayAsk        bool
	Clarification string
}

// PlannerPrompt renders the planner's prompt for r: the question, its
// context and depth (which fixes how many sub-questions and queries to
// write), the date window when r.Since is set and today's date. When
// re-planning it includes every earlier plan with its sub-questions, queries
// and why it was not kept (seed 000: previous strategies), and every unused
// human Feedback note. Reply with PlanOutput.
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
		Steering:     steeringBlocks(r),
		MayAsk:       r.mayClarify(),
	}
	d.Clarification = clarificationBlock(r)
	if strings.TrimSpace(r.Context) != "" {
		d.Context = untrustedBlock("context", r.Context)
	}
	if h := planHistory(r); len(h) > 0 {
		var b strings.Builder
		for i, a := range h {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "Plan %d — %s\n", a.Round, flatLine(a.Outcome))
			if len(a.SubQuestions) > 0 {
				b.WriteString("Sub-questions:\n" + numberedLines(a.SubQuestions) + "\n")
			}
			if len(a.Queries) > 0 {
				b.WriteString("Search queries:\n" + bulletLines(a.Queries) + "\n")
			}
		}
		d.History = untrustedBlock("earlier_plans", b.String())
	}
	return renderPrompt("planner", d)
}

// planHistory is every earlier plan of r, oldest first. A run that planned
// before plans were recorded shows its last plan, outcome unknown.
func planHistory(r *Run) []PlanAttempt {
	if len(r.PlanHistory) > 0 || r.Plan == nil {
		return r.PlanHistory
	}
	a := PlanAttempt{Round: r.Counters.PlanRounds, SubQuestions: r.Plan.SubQuestions, Outcome: "not accepted"}
	for _, q := range r.Queries {
		a.Queries = append(a.Queries, q.Kind+": "+q.Text)
	}
	return []PlanAttempt{a}
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
	Steering     []string // the run's steering notes, each in its requester_note block
	Question     string
	SubQuestions string
	Results      []string
	IDs          string
}

// RankerPrompt renders the ranker's prompt for one batch of search results:
// for each source id a relevance judgement from 0 to 1 and a one-line gist,
// following the run's steering notes.
// Reply with RankOutput.
func RankerPrompt(question string, subQuestions []string, notes []SteeringNote, batch []Source) (system, user string) {
	d := rankerData{Question: untrustedBlock("question", question), Steering: noteBlocks(notes)}
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
// sufficiency (sufficient, gaps_minor, gaps_major) and gap queries. With a
// plan, it maps the pages to the sub-questions whose searches found them and
// asks, per sub-question, whether the evidence answers it; contradictions
// come with both sides and their source ids. On a gap round it lists the
// previous analysis' gaps. Reply with AnalysisOutput.
func AnalystPrompt(r *Run, pages []Page) (system, user string) {
	maxGap := r.Limits.MaxGapRounds
	if maxGap == 0 {
		maxGap = 2
	}
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

// reformulatorData is what the reformulator templates see.
type reformulatorData struct {
	Steering     []string // the run's steering notes, each in its requester_note block
	Question     string
	SubQuestions string
	Searches     []string
	IDs          string
	// Kinds are the search types the backends serve, e.g. "web, academic".
	Kinds string
	// OneKind is set when only one type is served: a retry rewords only.
	OneKind bool
}

// ReformulatorPrompt renders the prompt that rewrites searches whose results
// were all irrelevant: the question, the sub-questions, and per search its
// id, type, wording, sub-question and the results it got with their
// relevance, and the search types the backends serve (kinds; nil: all of
// QueryKinds). Reply with ReformulationOutput.
func ReformulatorPrompt(r *Run, qs []Query, kinds []string) (system, user string) {
	if len(kinds) == 0 {
		kinds = QueryKinds
	}
	d := reformulatorData{Question: untrustedBlock("question", r.Question), Steering: steeringBlocks(r), Kinds: strings.Join(kinds, ", "), OneKind: len(kinds) == 1}
	subs := planSubQuestions(r)
	if len(subs) > 0 {
		d.SubQuestions = untrustedBlock("sub_questions", numberedLines(subs))
	}
	ids := make([]string, 0, len(qs))
	for _, q := range qs {
		ids = append(ids, attrSafe(q.ID))
		var b strings.Builder
		fmt.Fprintf(&b, "Search: %s\nType: %s\n", flatLine(q.Text), normalizeKind(q.Kind))
		if q.SubQuestion >= 1 && q.SubQuestion <= len(subs) {
			fmt.Fprintf(&b, "Serves sub-question %d\n", q.SubQuestion)
		}
		hits := r.hitsOf(q)
		if len(hits) == 0 {
			b.WriteString("Results: none\n")
		} else {
			b.WriteString("Results (relevance from 0 to 1):\n")
			for _, s := range hits {
				fmt.Fprintf(&b, "- %.1f %s — %s\n", s.Relevance, flatLine(nonBlank(s.Title, "(untitled)")), hostDomain(s.URL))
			}
		}
		d.Searches = append(d.Searches, untrustedBlock("poor_search", b.String(), "query_id", attrSafe(q.ID)))
	}
	d.IDs = strings.Join(ids, ", ")
	return renderPrompt("reformulator", d)
}
