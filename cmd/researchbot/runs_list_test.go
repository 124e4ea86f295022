package main

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/researchbot/researchbot/pipeline"
)

// TestRunsListIsCleanForTheTerminal: a question typed in Slack reaches
// `researchbot runs` on an operator's terminal; nothing in it may move the
// cursor, reorder the line or break the table.
func TestRunsListIsCleanForTheTerminal(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	runs := []*pipeline.Run{
		{ID: "r-1", Question: "\x1b[2J\x1b]0;pwned\x07what is \u202eRAG\u202c?\r\nand\u200b more\tstuff", Status: pipeline.StatusRunning,
			Step: pipeline.StepSearch, Origin: pipeline.Origin{Kind: "slack"}, CreatedAt: now.Add(-2 * time.Minute)},
		{ID: "r-2", Question: strings.Repeat("é", 100), Status: pipeline.StatusCompleted, Step: pipeline.StepDone,
			Origin: pipeline.Origin{Kind: "terminal"}, CreatedAt: now.Add(-time.Hour)},
	}
	out := formatRuns(runs, now, false)
	lines := strings.Split(out, "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and one per run:\n%s", len(lines), out)
	}
	for _, r := range out {
		if (unicode.Is(unicode.Cc, r) && r != '\n') || unicode.Is(unicode.Cf, r) {
			t.Fatalf("the list prints %U:\n%q", r, out)
		}
	}
	if !strings.HasSuffix(lines[1], "what is RAG? and more stuff") {
		t.Errorf("row 1 = %q", lines[1])
	}
	if !strings.HasSuffix(lines[2], strings.Repeat("é", 59)+"…") {
		t.Errorf("row 2 is not cut at 60 characters: %q", lines[2])
	}
}
