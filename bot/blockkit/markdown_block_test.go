package blockkit

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/researchbot/researchbot/pipeline"
)

func TestMarkdownBlockTextKeepsStructure(t *testing.T) {
	links := sourceLinks("https://example.org/defrost")
	md := "| Model | Cost |\n| :--- | ---: |\n| A \\| B | $5 <!here> |\n\n# Heat pumps\n\nThey **work** in _cold_ climates ~~never~~ [1].\n\n- one\n- two\n  1. nested\n\n> a quote\n\n```go\nfmt.Println(\"`x`\")\n```\n\nSee [the study](https://example.org/defrost) and `a<b`."
	got, ok := MarkdownBlockText(md, links, MaxMarkdownBlockText)
	if !ok {
		t.Fatal("did not fit")
	}
	for _, want := range []string{"| Model | Cost |\n| :--- | ---: |\n| A \\| B | $5 ＜!here＞ |", "# Heat pumps", "**work**", "_cold_", "~~never~~", "\\[1\\]", "- one", "  1. nested", "> a quote", "```\nfmt.Println(\"`x`\")\n```", "[the study](https://example.org/defrost)", "`a＜b`"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestMarkdownBlockTextNeutralisesHostileText(t *testing.T) {
	links := sourceLinks("https://example.org/defrost")
	md := "<!channel> **<!here> alert** `<!everyone>` <@U999> <https://evil.example|click> [the study](https://evil.example/x) " +
		"<https://evil.example> &lt;!channel&gt; &#60;@U123&#62; <b>html</b>\n\n```\n<!subteam^S1>\n```\n\n[ok](https://example.org/defrost) [bad](javascript:alert(1)) \u202eevil\u200b"
	got, ok := MarkdownBlockText(md, links, MaxMarkdownBlockText)
	if !ok {
		t.Fatal("did not fit")
	}
	for _, bad := range []string{"<", ">", "evil.example/x)", "](https://evil.example", "](javascript", "\u202e", "\u200b", "&lt;", "&#60;", "https://evil", "@U"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q survived:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "[ok](https://example.org/defrost)") {
		t.Errorf("the link to a fetched page was lost:\n%s", got)
	}
	if !strings.Contains(got, "＜!channel＞") || !strings.Contains(got, "＜@\u2060U999＞") || !strings.Contains(got, "＜@\u2060U123＞") {
		t.Errorf("hostile text is not shown as itself:\n%s", got)
	}
}

func TestMarkdownBlockTextShowsMarkupCharactersAsThemselves(t *testing.T) {
	for md, want := range map[string]string{
		"\\# not a heading":          "\\# not a heading",
		"1\\. not a list":            "1\\. not a list",
		"\\- not an item, a - b.":    "\\- not an item, a - b.",
		"5 \\* 3 = 15, snake\\_case": "5 \\* 3 = 15, snake\\_case",
		"R&D costs $5 (2024).":       "R&amp;D costs $5 (2024).",
		"see http://evil.example, www.evil.example or me@evil.example": "see http:/\u2060/evil.example, www\u2060.evil.example or me@\u2060evil.example",
	} {
		if got, _ := MarkdownBlockText(md, nil, MaxMarkdownBlockText); got != want {
			t.Errorf("%q → %q, want %q", md, got, want)
		}
	}
}

func TestMarkdownBlockTextLimit(t *testing.T) {
	fits := strings.Repeat("a", MaxMarkdownBlockText)
	if got, ok := MarkdownBlockText(fits, nil, MaxMarkdownBlockText); !ok || utf8.RuneCountInString(got) != MaxMarkdownBlockText {
		t.Errorf("%d characters did not fit in %d", len(fits), MaxMarkdownBlockText)
	}
	if _, ok := MarkdownBlockText(fits+"a", nil, MaxMarkdownBlockText); ok {
		t.Error("one character over Slack's limit fitted")
	}
	if _, ok := MarkdownBlockText(fits, nil, MaxMarkdownBlockText+5000); !ok {
		t.Error("a limit above Slack's is not capped to it")
	} else if _, ok := MarkdownBlockText(fits+"a", nil, MaxMarkdownBlockText+5000); ok {
		t.Error("a limit above Slack's let more through")
	}
	// Escapes count: 6,001 asterisks are 12,002 characters escaped.
	if _, ok := MarkdownBlockText("a"+strings.Repeat("*", 6000), nil, MaxMarkdownBlockText); ok {
		t.Error("the escaped length was not what was measured")
	}
	if _, ok := MarkdownBlockText("   ", nil, MaxMarkdownBlockText); ok {
		t.Error("empty text makes an empty markdown block")
	}
	// Too long: the mrkdwn section, cut, is the fallback.
	b := MarkdownBlock(fits+"a", nil, MaxMarkdownBlockText, 2800)
	if string(b.BlockType()) != "section" {
		t.Errorf("fallback block is %s", b.BlockType())
	}
	if string(MarkdownBlock("short", nil, MaxMarkdownBlockText, 2800).BlockType()) != "markdown" {
		t.Error("short text is not a markdown block")
	}
}

func TestGoldenMarkdownBlocks(t *testing.T) {
	rep := followUpReport()
	rep.Status, rep.Confidence = "complete", "high"
	rep.Metadata = pipeline.Metadata{RunID: "r-1", SourcesUsed: 2, WordCount: 1200, CostUSD: 0.42}
	rep.Abstract = "## Findings\n\nHeat pumps **work** below freezing [1]; a page said <!channel> and [click here](https://evil.example/x).\n\n| cost | source |\n| --- | :---: |\n| high &amp; rising | [2] |\n\n1. defrost\n2. sizing"
	golden(t, "report_markdown", msg(RenderReport(rep, nil)))
	rep.Abstract = strings.Repeat("Heat pumps work below freezing [1]. ", 400) // longer than a markdown block
	blocks := RenderReport(rep, nil)
	if string(blocks[2].BlockType()) != "section" {
		t.Errorf("a summary too long for a markdown block is a %s", blocks[2].BlockType())
	}
	golden(t, "report_markdown_too_long", msg(blocks))
	long := pipeline.FollowUp{ID: "r-1.f2", By: "U1", Answered: true, Question: "And costs?", Answer: strings.Repeat("Costs are *high* [2]. ", 600)}
	golden(t, "followup_markdown_too_long", msg(RenderFollowUp(followUpReport(), long)))
}

// FuzzMarkdownBlockText: whatever the Markdown, a markdown block never
// carries Slack markup (no "<"), links only to a fetched page, and stays
// within Slack's limit.
func FuzzMarkdownBlockText(f *testing.F) {
	for _, s := range []string{"<!channel> **x** [a](https://example.org/ok) [b](https://evil.example)", "```\n<@U1>\n```", "| a | b |\n|---|---|\n| <x> | y |", "> - 1. # `<`", "www.evil.example me@x.y http://evil"} {
		f.Add(s)
	}
	links := sourceLinks("https://example.org/ok")
	f.Fuzz(func(t *testing.T, md string) {
		got, ok := MarkdownBlockText(md, links, MaxMarkdownBlockText)
		if !ok {
			return
		}
		if strings.Contains(got, "<") || utf8.RuneCountInString(got) > MaxMarkdownBlockText {
			t.Fatalf("%q → %q", md, got)
		}
		// Read back as Markdown with GitHub's autolinks, every link is the fetched page.
		src := []byte(got)
		doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(gmtext.NewReader(src))
		_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			dest := ""
			switch l := n.(type) {
			case *ast.Link:
				dest = string(l.Destination)
			case *ast.AutoLink:
				dest = string(l.URL(src))
			case *ast.Image:
				dest = string(l.Destination)
			default:
				return ast.WalkContinue, nil
			}
			if entering && dest != "https://example.org/ok" {
				t.Fatalf("%q links to %q: %q", md, dest, got)
			}
			return ast.WalkContinue, nil
		})
	})
}
