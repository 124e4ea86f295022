package blockkit

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxMarkdownBlockText is Slack's limit on the text of the markdown blocks
// of one message, together ("the cumulative limit for all markdown blocks
// in a single payload is 12,000 characters").
const MaxMarkdownBlockText = 12000

// markdownLookalikes replace the characters Slack's own markup is made of,
// so untrusted text cannot become a mention, a broadcast or a masked link
// whatever Slack does with the Markdown it translates: "<" and ">" are
// shown as their full-width forms, and "&" as an entity Markdown decodes
// back to "&" (never to "<").
var markdownLookalikes = map[rune]string{'<': "＜", '>': "＞", '&': "&amp;"}

// autolinkBreaker keeps text from becoming a link by itself: a markdown
// block has no "verbatim", and Markdown (like Slack) links bare URLs,
// www. names and e-mail addresses. A word joiner, which no one sees, is
// put where the link would be recognised.
var autolinkBreaker = strings.NewReplacer("://", ":/\u2060/", "www.", "www\u2060.", "WWW.", "WWW\u2060.", "@", "@\u2060")

// markdownEscaped is the ASCII punctuation Markdown reads as markup
// anywhere in a line; in untrusted text each is written backslash-escaped,
// so it shows as itself. markdownLineStart is what is markup only where a
// line starts (headings, list items; "1." and "1)" too).
const (
	markdownEscaped   = "\\`*_[]|~"
	markdownLineStart = "#+-="
)

// MarkdownBlockText renders untrusted Markdown (a report's summary, a
// follow-up answer) as the standard Markdown of a markdown block: headings,
// emphasis, lists, quotes, code and strikethrough keep their meaning; every
// character of the text is shown as itself (Markdown punctuation escaped,
// Slack's markup characters replaced by look-alikes, invisible characters
// dropped, bare URLs and addresses broken by an invisible word joiner so
// they are not linked), raw HTML is shown as text, and a link is kept only
// when it points at one of links. It reports false when the result would be longer
// than limit characters (at most MaxMarkdownBlockText): the caller then
// keeps the mrkdwn rendering (Markdown), which can cut.
func MarkdownBlockText(md string, links SourceLinks, limit int) (string, bool) {
	limit = min(limit, MaxMarkdownBlockText)
	src := []byte(strings.ToValidUTF8(md, "\uFFFD"))
	doc := goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Table)).Parser().Parse(gmtext.NewReader(src))
	c := &mdBlockConverter{src: src, links: links, lineStart: true}
	c.blocks(doc, true)
	out := strings.TrimSpace(c.b.String())
	if out == "" || utf8.RuneCountInString(out) > limit {
		return "", false
	}
	return out, true
}

// MarkdownBlock is a markdown block of untrusted Markdown when it fits in
// limit characters, else a section of it as mrkdwn (cut to mrkdwnLimit).
func MarkdownBlock(md string, links SourceLinks, limit, mrkdwnLimit int) slack.Block {
	if text, ok := MarkdownBlockText(md, links, limit); ok {
		return slack.NewMarkdownBlock("", text)
	}
	return Section(Markdown(md, links, mrkdwnLimit))
}

// MarkdownBudget shares Slack's MaxMarkdownBlockText among the markdown
// blocks of one message: each block takes what it uses from what is left,
// and a text that does not fit in what is left is a mrkdwn section instead.
type MarkdownBudget struct{ left int }

// NewMarkdownBudget is the budget of one message.
func NewMarkdownBudget() *MarkdownBudget { return &MarkdownBudget{left: MaxMarkdownBlockText} }

// Block renders untrusted Markdown md, under a bold title when title (our
// own words, trusted) is not "", as a markdown block when it fits in what is
// left of the budget (and takes it), else as a mrkdwn section cut to
// mrkdwnLimit (MarkdownBlock's fallback).
func (b *MarkdownBudget) Block(title, md string, links SourceLinks, mrkdwnLimit int) slack.Block {
	head := ""
	if title != "" {
		head = "**" + title + "**\n\n"
	}
	if text, ok := MarkdownBlockText(md, links, b.left-utf8.RuneCountInString(head)); ok {
		text = head + text
		b.left -= utf8.RuneCountInString(text)
		return slack.NewMarkdownBlock("", text)
	}
	if title != "" {
		return Section("*" + title + "*\n" + Markdown(md, links, mrkdwnLimit))
	}
	return Section(Markdown(md, links, mrkdwnLimit))
}

// mdBlockConverter walks a goldmark AST and writes standard Markdown.
type mdBlockConverter struct {
	src   []byte
	links SourceLinks
	b     strings.Builder
	// prefix starts every new line: quote markers and list indentation.
	prefix []string
	inLink bool
	// lineStart is set where a line's content starts (after a line break,
	// a list bullet or a quote marker), digits while only digits followed.
	lineStart, digits bool
}

func (c *mdBlockConverter) newline() {
	c.b.WriteString("\n" + strings.Join(c.prefix, ""))
	c.lineStart, c.digits = true, false
}

// markup writes s, produced by the converter; starts says whether a line's
// content starts after it.
func (c *mdBlockConverter) markup(s string, starts bool) {
	c.b.WriteString(s)
	c.lineStart, c.digits = starts, false
}

// blocks writes n's child blocks, a blank line between them at the top
// level and in quotes, a line break inside list items.
func (c *mdBlockConverter) blocks(n ast.Node, loose bool) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		if ch != n.FirstChild() {
			if loose {
				c.newline()
			}
			c.newline()
		}
		c.block(ch)
	}
}

func (c *mdBlockConverter) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		c.markup(strings.Repeat("#", min(max(n.Level, 1), 6))+" ", true)
		c.inlines(n)
	case *ast.ThematicBreak:
		c.markup("---", false)
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		var code []string
		ls := n.Lines()
		for i := 0; i < ls.Len(); i++ {
			seg := ls.At(i)
			code = append(code, strings.TrimRight(Visible(string(seg.Value(c.src))), "\r\n"))
		}
		fence := codeFence(strings.Join(code, "\n"), 3)
		c.markup(fence, false)
		for _, l := range code {
			c.newline()
			c.markup(lookalikes(l), false)
		}
		c.newline()
		c.markup(fence, false)
	case *ast.HTMLBlock:
		ls := n.Lines()
		for i := 0; i < ls.Len(); i++ {
			if i > 0 {
				c.newline()
			}
			seg := ls.At(i)
			c.text(strings.TrimRight(string(seg.Value(c.src)), "\r\n"))
		}
	case *east.Table:
		c.table(n)
	case *ast.Blockquote:
		c.markup("> ", true)
		c.prefix = append(c.prefix, "> ")
		c.blocks(n, true)
		c.prefix = c.prefix[:len(c.prefix)-1]
	case *ast.List:
		num := n.Start
		for it := n.FirstChild(); it != nil; it = it.NextSibling() {
			if it != n.FirstChild() {
				c.newline()
			}
			bullet := "- "
			if n.IsOrdered() {
				bullet = strconv.Itoa(num) + ". "
				num++
			}
			c.markup(bullet, true)
			c.prefix = append(c.prefix, strings.Repeat(" ", len(bullet)))
			c.blocks(it, false)
			c.prefix = c.prefix[:len(c.prefix)-1]
		}
	default:
		if n.Type() == ast.TypeBlock && n.HasChildren() && n.Kind() != ast.KindParagraph && n.Kind() != ast.KindTextBlock {
			c.blocks(n, false)
			return
		}
		c.inlines(n)
	}
}

// table writes a table as a GFM table: its header row, the delimiter row
// with the columns' alignments, and its rows (cells' text escaped, so a "|"
// in a cell is text).
func (c *mdBlockConverter) table(t *east.Table) {
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if row != t.FirstChild() {
			c.newline()
		}
		c.markup("|", false)
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			c.markup(" ", false)
			c.inlines(cell)
			c.markup(" |", false)
		}
		if _, ok := row.(*east.TableHeader); ok {
			c.newline()
			c.markup("|", false)
			for _, a := range t.Alignments {
				delim := map[east.Alignment]string{east.AlignLeft: ":---", east.AlignRight: "---:", east.AlignCenter: ":---:"}[a]
				c.markup(" "+FirstNonEmpty(delim, "---")+" |", false)
			}
		}
	}
}

func (c *mdBlockConverter) inlines(n ast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.inline(ch)
	}
}

func (c *mdBlockConverter) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(c.src)
		if !n.IsRaw() {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		}
		c.text(string(v))
		if n.HardLineBreak() || n.SoftLineBreak() {
			c.newline()
		}
	case *ast.String:
		c.text(string(n.Value))
	case *ast.CodeSpan:
		var code strings.Builder
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			switch t := ch.(type) {
			case *ast.Text:
				code.WriteString(string(t.Value(c.src)))
			case *ast.String:
				code.WriteString(string(t.Value))
			}
		}
		s := Visible(strings.ReplaceAll(code.String(), "\n", " "))
		fence := codeFence(s, 1)
		pad := ""
		if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
			pad = " "
		}
		c.markup(fence+pad+lookalikes(s)+pad+fence, false)
	case *ast.Emphasis:
		marker := "_"
		if n.Level >= 2 {
			marker = "**"
		}
		c.markup(marker, false)
		c.inlines(n)
		c.markup(marker, false)
	case *east.Strikethrough:
		c.markup("~~", false)
		c.inlines(n)
		c.markup("~~", false)
	case *ast.Link:
		c.link(string(n.Destination), func() { c.inlines(n) })
	case *ast.AutoLink:
		label := string(n.Label(c.src))
		c.link(string(n.URL(c.src)), func() { c.text(label) })
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			c.text(string(seg.Value(c.src)))
		}
	default:
		c.inlines(n)
	}
}

// link writes a link to a fetched page as a Markdown link around its
// text, and any other link as its text alone.
func (c *mdBlockConverter) link(dest string, label func()) {
	u := ""
	if c.links[linkKey(dest)] {
		u = markdownURL(dest)
	}
	if u == "" || c.inLink {
		label()
		return
	}
	c.inLink = true
	c.markup("[", false)
	label()
	c.markup("]("+u+")", false)
	c.inLink = false
}

// text writes untrusted text shown as itself.
func (c *mdBlockConverter) text(s string) {
	for _, r := range autolinkBreaker.Replace(Visible(s)) {
		switch {
		case markdownLookalikes[r] != "":
			c.b.WriteString(markdownLookalikes[r])
		case r == '\n':
			c.newline()
			continue
		case r < utf8.RuneSelf && strings.ContainsRune(markdownEscaped, r),
			c.lineStart && strings.ContainsRune(markdownLineStart, r),
			c.digits && (r == '.' || r == ')'):
			c.b.WriteByte('\\')
			c.b.WriteRune(r)
		default:
			c.b.WriteRune(r)
		}
		switch {
		case c.lineStart && (r == ' ' || r == '\t'):
		case (c.lineStart || c.digits) && r >= '0' && r <= '9':
			c.lineStart, c.digits = false, true
		default:
			c.lineStart, c.digits = false, false
		}
	}
}

// lookalikes is code shown as itself: only Slack's markup characters are
// replaced (Markdown does not read inside code).
func lookalikes(s string) string {
	return strings.NewReplacer("<", "＜", ">", "＞").Replace(s)
}

// codeFence is a run of backticks longer than any in s, at least n long.
func codeFence(s string, n int) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(n, longest+1))
}

// markdownURL is u ready for a Markdown link destination, or "" when it is
// not an absolute http(s) URL: characters that would end the destination
// or form Slack markup are percent-encoded, and "&" is written as the
// entity Markdown decodes back to "&".
func markdownURL(u string) string {
	s := safeURL(u)
	if s == "" {
		return ""
	}
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(s)
}
