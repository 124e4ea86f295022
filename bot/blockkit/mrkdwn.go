package blockkit

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// SourceLinks is the set of pages rendered Markdown may link to: the pages
// the run fetched. A link to anything else keeps its text and loses its
// target.
type SourceLinks map[string]bool

// sourceLinks returns the set of the given URLs.
func sourceLinks(urls ...string) SourceLinks {
	l := SourceLinks{}
	for _, u := range urls {
		if k := linkKey(u); k != "" {
			l[k] = true
		}
	}
	return l
}

// linkKey is how a URL is compared with the fetched pages.
func linkKey(u string) string {
	return strings.TrimSuffix(strings.TrimSpace(u), "/")
}

// allows returns u ready for a Slack link when it is a fetched page, else "".
func (l SourceLinks) allows(u string) string {
	if !l[linkKey(u)] {
		return ""
	}
	return safeURL(u)
}

// Markdown renders untrusted Markdown (model output, page text) as Slack
// mrkdwn of at most limit runes: emphasis, headings (bold), lists, quotes,
// code and strikethrough keep their meaning; every character of the text is
// escaped as Escape does, so no mention, broadcast or masked link survives,
// raw HTML is shown as text, and a link is kept only when it points at one
// of links. A cut ends with an ellipsis and closes every open marker.
func Markdown(md string, links SourceLinks, limit int) string {
	return renderMarkdown(md, links, limit, false)
}

// MarkdownLine is Markdown on one line, for list entries: line breaks and
// block boundaries become spaces and code blocks become code spans.
func MarkdownLine(md string, links SourceLinks, limit int) string {
	return renderMarkdown(md, links, limit, true)
}

func renderMarkdown(md string, links SourceLinks, limit int, line bool) string {
	if limit < 1 {
		return ""
	}
	src := []byte(strings.ToValidUTF8(md, "\uFFFD"))
	doc := goldmark.New(goldmark.WithExtensions(extension.Strikethrough)).Parser().Parse(gmtext.NewReader(src))
	c := &mdConverter{src: src, w: newMrkdwnWriter(limit), links: links, line: line}
	c.blocks(doc, "\n\n")
	return c.w.String()
}

// mdConverter walks a goldmark AST and writes mrkdwn.
type mdConverter struct {
	src   []byte
	w     *mrkdwnWriter
	links SourceLinks
	line  bool
	// prefix starts every new line: the quote marker and list indentation.
	prefix []string
	// style counts the open markers of each kind, so none is nested in
	// itself (Slack does not nest them) and nothing is styled inside code.
	style map[string]int
}

// newline starts a new line (a space on one line) with the current prefix.
func (c *mdConverter) newline() {
	if c.line || c.style["<"] > 0 {
		c.w.markup(" ")
		return
	}
	c.w.markup("\n" + strings.Join(c.prefix, ""))
}

// blocks writes n's child blocks, separated by sep (a blank line at the top
// level, a line break inside list items).
func (c *mdConverter) blocks(n ast.Node, sep string) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		if ch != n.FirstChild() {
			if sep == "\n\n" && !c.line {
				c.newline()
			}
			c.newline()
		}
		c.block(ch)
	}
}

// block writes one block node.
func (c *mdConverter) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Heading:
		c.styled("*", n, c.inlines)
	case *ast.ThematicBreak:
		c.w.markup("―――")
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		c.codeBlock(n)
	case *ast.HTMLBlock:
		c.lines(n, c.w.text)
		if n.HasClosure() {
			c.newline()
			c.w.text(string(n.ClosureLine.Value(c.src)))
		}
	case *ast.Blockquote:
		// Slack quotes only whole lines from their start: a quote inside a
		// list item or another quote is shown as its text.
		if c.line || len(c.prefix) > 0 {
			c.blocks(n, "\n")
			return
		}
		c.w.markup("> ")
		c.prefix = append(c.prefix, "> ")
		c.blocks(n, "\n")
		c.prefix = c.prefix[:len(c.prefix)-1]
	case *ast.List:
		c.list(n)
	case *ast.Paragraph, *ast.TextBlock:
		c.inlines(n)
	default:
		if n.Type() == ast.TypeBlock && n.HasChildren() {
			c.blocks(n, "\n")
		} else {
			c.inlines(n)
		}
	}
}

// list writes a list: "•" or numbered items, nested lists indented.
func (c *mdConverter) list(l *ast.List) {
	num := l.Start
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		if it != l.FirstChild() {
			c.newline()
		}
		bullet := "• "
		if l.IsOrdered() {
			bullet = strconv.Itoa(num) + ". "
			num++
		}
		c.w.markup(bullet)
		c.prefix = append(c.prefix, "    ")
		c.blocks(it, "\n")
		c.prefix = c.prefix[:len(c.prefix)-1]
	}
}

// codeBlock writes a code block as a preformatted block (a code span on one
// line). Backticks inside become look-alikes, so the code cannot end early.
func (c *mdConverter) codeBlock(n ast.Node) {
	opener, closer := "```\n", "\n```"
	if c.line {
		opener, closer = "`", "`"
	}
	if c.style["`"] > 0 || !c.w.open(opener, closer) {
		c.lines(n, c.codeText)
		return
	}
	c.bump("`", 1)
	saved := c.prefix
	c.prefix = nil // inside ``` a prefix would be shown as code
	c.lines(n, c.codeText)
	c.prefix = saved
	c.bump("`", -1)
	c.w.close()
}

// lines writes the lines of a block node through write, without their final
// line break.
func (c *mdConverter) lines(n ast.Node, write func(string)) {
	ls := n.Lines()
	for i := 0; i < ls.Len(); i++ {
		seg := ls.At(i)
		if i > 0 {
			c.newline()
		}
		write(strings.TrimRight(string(seg.Value(c.src)), "\r\n"))
	}
}

// codeText writes text that sits inside code.
func (c *mdConverter) codeText(s string) {
	c.w.text(strings.ReplaceAll(s, "`", "ˋ"))
}

// inlines writes n's inline children.
func (c *mdConverter) inlines(n ast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.inline(ch)
	}
}

// inline writes one inline node.
func (c *mdConverter) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Value(c.src)
		if !n.IsRaw() {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		}
		c.plain(string(v))
		switch {
		case n.HardLineBreak():
			c.newline()
		case n.SoftLineBreak():
			if c.line {
				c.w.markup(" ")
			} else {
				c.newline()
			}
		}
	case *ast.String:
		c.plain(string(n.Value))
	case *ast.CodeSpan:
		c.styled("`", n, func(n ast.Node) {
			for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
				if t, ok := ch.(*ast.Text); ok {
					c.codeText(string(t.Value(c.src)))
				} else if s, ok := ch.(*ast.String); ok {
					c.codeText(string(s.Value))
				}
			}
		})
	case *ast.Emphasis:
		marker := "_"
		if n.Level >= 2 {
			marker = "*"
		}
		c.styled(marker, n, c.inlines)
	case *east.Strikethrough:
		c.styled("~", n, c.inlines)
	case *ast.Link:
		c.link(string(n.Destination), n)
	case *ast.AutoLink:
		u := string(n.URL(c.src))
		if su := c.links.allows(u); su != "" && c.style["<"] == 0 && c.w.open("<"+su+"|", ">") {
			c.w.text(string(n.Label(c.src)))
			c.w.close()
			return
		}
		c.plain(string(n.Label(c.src)))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			c.plain(string(seg.Value(c.src)))
		}
	default:
		c.inlines(n)
	}
}

// plain writes text, inside code or out.
func (c *mdConverter) plain(s string) {
	if c.style["`"] > 0 {
		c.codeText(s)
		return
	}
	c.w.text(s)
}

// link writes a link to a fetched page as a Slack link around its text, and
// any other link as its text alone.
func (c *mdConverter) link(dest string, n ast.Node) {
	su := c.links.allows(dest)
	if su == "" || c.style["<"] > 0 || c.style["`"] > 0 || !c.w.open("<"+su+"|", ">") {
		c.inlines(n)
		return
	}
	c.bump("<", 1)
	c.inlines(n)
	c.bump("<", -1)
	c.w.close()
}

// styled writes n through write inside marker (bold *, italic _, strike ~,
// code `), unless that marker or code is open already.
func (c *mdConverter) styled(marker string, n ast.Node, write func(ast.Node)) {
	if c.style[marker] > 0 || c.style["`"] > 0 || !c.w.open(marker, marker) {
		write(n)
		return
	}
	c.bump(marker, 1)
	write(n)
	c.bump(marker, -1)
	c.w.close()
}

// bump changes the count of open markers of one kind.
func (c *mdConverter) bump(marker string, by int) {
	if c.style == nil {
		c.style = map[string]int{}
	}
	c.style[marker] += by
}
