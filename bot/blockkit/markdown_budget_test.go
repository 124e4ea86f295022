package blockkit

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// markdownTexts are the texts of blocks' markdown blocks, and their total
// length in characters.
func markdownTexts(blocks []slack.Block) (texts []string, total int) {
	for _, b := range blocks {
		if m, ok := b.(*slack.MarkdownBlock); ok {
			texts = append(texts, m.Text)
			total += utf8.RuneCountInString(m.Text)
		}
	}
	return texts, total
}

// TestMarkdownBudgetShared: the markdown blocks of one message share
// Slack's 12,000 characters; the text that no longer fits is a mrkdwn
// section, and one that fits exactly is still a markdown block.
func TestMarkdownBudgetShared(t *testing.T) {
	b := NewMarkdownBudget()
	first := b.Block("", strings.Repeat("a", MaxMarkdownBlockText-100), nil, 2800)
	if first.BlockType() != slack.MBTMarkdown {
		t.Fatalf("first block is %s", first.BlockType())
	}
	head := len("**Conclusion**\n\n")
	if got := b.Block("Conclusion", strings.Repeat("b", 100-head+1), nil, 1500); got.BlockType() != slack.MBTSection {
		t.Errorf("one character over the budget: a %s", got.BlockType())
	} else if s := got.(*slack.SectionBlock).Text.Text; !strings.HasPrefix(s, "*Conclusion*\n") {
		t.Errorf("fallback section = %q", s)
	}
	exact := b.Block("Conclusion", strings.Repeat("b", 100-head), nil, 1500)
	if exact.BlockType() != slack.MBTMarkdown || exact.(*slack.MarkdownBlock).Text != "**Conclusion**\n\n"+strings.Repeat("b", 100-head) {
		t.Errorf("exactly the budget: %#v", exact)
	}
	if got := b.Block("", "c", nil, 100); got.BlockType() != slack.MBTSection {
		t.Errorf("a spent budget still gave a %s", got.BlockType())
	}
}

// TestReportAndDraftMarkdownWithinLimit: a report's summary and conclusion,
// and a draft's summary and the reviewer's, are markdown blocks while they
// fit together in Slack's limit, and never exceed it.
func TestReportAndDraftMarkdownWithinLimit(t *testing.T) {
	rep := feedbackReport()
	rep.Conclusion = "Heat pumps **pay off** [1]."
	if texts, _ := markdownTexts(RenderReport(rep, nil)); len(texts) != 2 || !strings.HasPrefix(texts[1], "**Conclusion**\n\nHeat pumps **pay off**") {
		t.Errorf("report markdown blocks = %q", texts)
	}
	rep.Abstract = strings.Repeat("Heat pumps work [1]. ", 560) // 11,760 characters
	blocks := RenderReport(rep, nil)
	if texts, total := markdownTexts(blocks); len(texts) != 1 || total > MaxMarkdownBlockText {
		t.Errorf("%d markdown blocks, %d characters", len(texts), total)
	}
	draft := pipeline.DraftPayload{Version: 1, Title: "Heat pumps", Abstract: "## Findings\n\nThey **work** <!channel> [x](https://evil.example/y).", Summary: "Solid; `cite` more <@U999>.", Score: 8}
	texts, total := markdownTexts(draftBody(draft))
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "**Summary**\n\n## Findings") || total > MaxMarkdownBlockText {
		t.Errorf("draft markdown blocks = %q", texts)
	}
	for _, s := range texts {
		if strings.Contains(s, "<") || strings.Contains(s, "](") || strings.Contains(s, "https://evil") {
			t.Errorf("hostile text survived in a draft's markdown block: %q", s)
		}
	}
	draft.Abstract, draft.Summary = strings.Repeat("x", MaxMarkdownBlockText-20), strings.Repeat("y", 100)
	texts, total = markdownTexts(draftBody(draft))
	if len(texts) != 1 || total > MaxMarkdownBlockText {
		t.Errorf("a long draft: %d markdown blocks, %d characters", len(texts), total)
	}
}

// TestGoldenDigestMarkdown: a stream digest (a report of what is new) shows
// its summary and conclusion as markdown blocks, hostile text neutralised
// and links kept only to fetched pages; a held digest's draft likewise.
func TestGoldenDigestMarkdown(t *testing.T) {
	digest := feedbackReport()
	digest.Title, digest.Metadata.RunID = "Heat pumps — weekly digest", "r-digest"
	digest.Abstract = "## New this week\n\n- Defrost cycles got **shorter** [1] <!here>\n- [A vendor](https://evil.example/ad) says <@U999> costs fell\n\n| item | source |\n| --- | --- |\n| efficiency | [1] |"
	digest.Conclusion = "Watch [the study](" + digest.References[0].URL + ") and www.evil.example next week."
	golden(t, "digest_markdown", msg(RenderReport(digest, nil)))
	golden(t, "digest_draft_markdown", msg(draftBody(pipeline.DraftPayload{Version: 1, Title: digest.Title, Abstract: digest.Abstract, Summary: "Covers the **new** items; <!channel> cite [1] more.", Score: 7.5, Recommendation: "approve"})))
}
