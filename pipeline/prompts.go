package pipeline

// What every prompt shares: the embedded templates (prompts/*.tmpl) and
// their rendering, prompt sizing, untrusted-text blocks, and the text and
// page helpers the builders format with. The builders are in
// prompts_gathering.go, prompts_composing.go and ask.go (follow-ups).

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

// depthName returns d when it is a known depth, else standard (the depth
// is written into prompts outside any untrusted block).
func depthName(d Depth) Depth {
	switch d {
	case DepthQuick, DepthComprehensive:
		return d
	}
	return DepthStandard
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

// nonBlank returns s, or def when s is blank.
func nonBlank(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
