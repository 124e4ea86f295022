package blockkit

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestReportFile: the report file's name keeps only what file systems
// take, and its title is the report's on one line, bounded.
func TestReportFile(t *testing.T) {
	if got := ReportFileName("run-1/../é x_2"); got != "research-run-1x_2.md" {
		t.Errorf("ReportFileName = %q", got)
	}
	if got := ReportFileTitle(&pipeline.Run{Report: &pipeline.Report{}}); got != "Research report" {
		t.Errorf("untitled: %q", got)
	}
	long := &pipeline.Run{Report: &pipeline.Report{Title: "Heat\npumps " + strings.Repeat("x", 300)}}
	if got := ReportFileTitle(long); strings.Contains(got, "\n") || len([]rune(got)) > 200 || !strings.HasPrefix(got, "Heat pumps") {
		t.Errorf("long title: %q", got)
	}
}
