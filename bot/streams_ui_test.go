package bot

import (
	"strings"
	"testing"
)

// TestStreamDomainsIsAStreamCommand: "/research stream domains …" is a
// stream command only with its options (the feature parses them:
// bot/streams' TestParseStreamDomains); without, it is a question.
func TestStreamDomainsIsAStreamCommand(t *testing.T) {
	sub := func(text string) (Command, bool) { return subcommand(text, strings.Fields(text)) }
	if c, ok := sub("stream domains Heat Watch --never-domain a.example"); !ok || c.Kind != CmdStream {
		t.Errorf("stream domains with options is not a stream command: %+v", c)
	}
	if _, ok := sub("stream domains of heat pump makers"); ok {
		t.Error("a question starting \"stream domains\" became a stream command")
	}
}
