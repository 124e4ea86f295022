package blockkit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// fetchedPage is the one page the Markdown tests treat as fetched.
const fetchedPage = "https://ok.example/a?x=1&y=2"

// hostileMarkdown smuggles mentions, broadcasts and masked links through
// every construct Markdown has.
var hostileMarkdown = []string{
	"<!channel> please read",
	"**<!channel>** in bold and _<!here>_ in italics",
	"`<!channel>` in code and ```<@U12345>``` in a span",
	"```\n<!everyone>\n<http://evil.example|click>\n```",
	"# <!channel> heading",
	"> <@U12345> quoted\n> <#C12345>",
	"- <!subteam^S123> in a list\n  1. <http://evil.example|nested>",
	"[<!channel>](http://evil.example) masked link",
	"[fine](" + fetchedPage + ") then [evil <!here>](" + fetchedPage + ")",
	"<http://evil.example|a masked link> and <https://evil.example>",
	"<div><!channel></div>\n\n<script>alert(1)</script>",
	"~~<!channel>~~ &lt;!channel&gt; &#60;!here&#62; \\<!channel\\>",
	"![<!channel>](http://evil.example/x.png)",
	"**unclosed <!channel",
	"[x](javascript:alert(1)) [y](" + fetchedPage + " \"t<!channel>\")",
	"a\u202e<!channel>\u200b\x1b[31m",
}

// checkMrkdwnSafe fails when out could mention, broadcast or link anywhere
// but the fetched page: every "<" must open a link to it, every ">" must
// close one or start a quote, and every "&" must begin an entity.
func checkMrkdwnSafe(t *testing.T, in, out string) {
	t.Helper()
	link := "<" + safeURL(fetchedPage) + "|"
	inLink := false
	for i := 0; i < len(out); i++ {
		switch out[i] {
		case '<':
			if inLink || !strings.HasPrefix(out[i:], link) {
				t.Fatalf("Markdown(%q) has a < that is not a link to a fetched page at %d:\n%s", in, i, out)
			}
			inLink = true
			i += len(link) - 1
		case '>':
			if inLink {
				inLink = false
				continue
			}
			if i > 0 && out[i-1] != '\n' {
				t.Fatalf("Markdown(%q) has a > that neither closes a link nor starts a quote at %d:\n%s", in, i, out)
			}
		case '&':
			if !strings.HasPrefix(out[i:], "&amp;") && !strings.HasPrefix(out[i:], "&lt;") && !strings.HasPrefix(out[i:], "&gt;") {
				t.Fatalf("Markdown(%q) has a bare & at %d:\n%s", in, i, out)
			}
		}
	}
	if inLink {
		t.Fatalf("Markdown(%q) leaves a link open:\n%s", in, out)
	}
	for _, r := range out {
		if hidden(r) {
			t.Fatalf("Markdown(%q) keeps the hidden character %U:\n%s", in, r, out)
		}
	}
}

func TestMarkdownNeutralisesHostileText(t *testing.T) {
	links := sourceLinks(fetchedPage)
	for _, in := range hostileMarkdown {
		for _, limit := range []int{5, 17, 40, 3000} {
			for _, out := range []string{Markdown(in, links, limit), MarkdownLine(in, links, limit)} {
				checkMrkdwnSafe(t, in, out)
				if n := utf8.RuneCountInString(out); n > limit {
					t.Errorf("Markdown(%q, %d) is %d runes long", in, limit, n)
				}
			}
		}
	}
}

func TestMarkdownKeepsLinksOnlyToFetchedPages(t *testing.T) {
	got := Markdown("see [the study]("+fetchedPage+") and [a blog](https://blog.example/)", sourceLinks(fetchedPage), 500)
	want := "see <https://ok.example/a?x=1&amp;y=2|the study> and a blog"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMarkdownCutClosesMarkers(t *testing.T) {
	in := "**bold text that goes on** and `code that goes on and on`"
	for limit := 1; limit < 70; limit++ {
		out := Markdown(in, nil, limit)
		if n := utf8.RuneCountInString(out); n > limit {
			t.Fatalf("limit %d: %d runes: %q", limit, n, out)
		}
		if strings.Count(out, "*")%2 != 0 || strings.Count(out, "`")%2 != 0 {
			t.Errorf("limit %d: a marker is left open: %q", limit, out)
		}
		if strings.Contains(out, "**") || strings.Contains(out, "``") {
			t.Errorf("limit %d: an empty marker pair: %q", limit, out)
		}
	}
}

func TestGoldenMarkdown(t *testing.T) {
	rich := "## Findings\n\nHeat pumps keep **70% of their capacity** at _-15 °C_ [1], per [the field study](" + fetchedPage + ").\n\n" +
		"- Cold-climate models use `EVI` compressors\n- Defrost cycles cost ~~5%~~ 3–8%\n  1. short cycles\n  2. long cycles\n\n" +
		"> Sizing matters more than brand.\n\n```\nCOP = heat / work\n```\n\n---\n\nSee <https://ok.example/a?x=1&y=2> and &amp; entities."
	type rendering struct {
		In, Markdown, Line, Cut string
	}
	links := sourceLinks(fetchedPage)
	var out []rendering
	for _, in := range append([]string{rich}, hostileMarkdown...) {
		out = append(out, rendering{In: in, Markdown: Markdown(in, links, 3000), Line: MarkdownLine(in, links, 3000), Cut: Markdown(in, links, 60)})
	}
	golden(t, "markdown", out)
}

// FuzzMrkdwn checks that no Markdown, however malformed, yields mrkdwn that
// mentions, broadcasts or links anywhere but a fetched page, or that is
// longer than asked.
func FuzzMrkdwn(f *testing.F) {
	for _, s := range hostileMarkdown {
		f.Add(s, 80)
	}
	f.Add("**a** _b_ `c` ~~d~~ [e]("+fetchedPage+")", 7)
	links := sourceLinks(fetchedPage)
	f.Fuzz(func(t *testing.T, in string, limit int) {
		limit = limit%4000 + 1
		if limit < 1 {
			limit = -limit + 1
		}
		for _, out := range []string{Markdown(in, links, limit), MarkdownLine(in, links, limit)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8: %q", out)
			}
			if n := utf8.RuneCountInString(out); n > limit {
				t.Fatalf("Markdown(%q, %d) is %d runes long", in, limit, n)
			}
			checkMrkdwnSafe(t, in, out)
		}
	})
}
