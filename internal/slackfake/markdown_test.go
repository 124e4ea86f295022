package slackfake

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestMarkdownBlocksWithinTheirLimit: markdown blocks are accepted up to
// 12,000 characters for the whole message, and refused beyond, or empty.
func TestMarkdownBlocksWithinTheirLimit(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	post := func(texts ...string) error {
		var blocks []slack.Block
		for _, s := range texts {
			blocks = append(blocks, slack.NewMarkdownBlock("", s))
		}
		_, _, err := api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionBlocks(blocks...), slack.MsgOptionText("fallback", false))
		return err
	}
	if err := post(strings.Repeat("é", 6000), strings.Repeat("a", 6000)); err != nil {
		t.Errorf("12,000 characters in two blocks: %v", err)
	}
	if err := post(strings.Repeat("a", 6000), strings.Repeat("a", 6001)); err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("12,001 characters: err = %v, want invalid_blocks", err)
	}
	if err := post(""); err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("empty markdown block: err = %v, want invalid_blocks", err)
	}
	if n := len(fake.Messages("C1")); n != 1 {
		t.Errorf("%d messages stored, want 1", n)
	}
}
