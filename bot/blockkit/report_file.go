package blockkit

// The names of the files the bot uploads.

import (
	"strings"

	"github.com/researchbot/researchbot/pipeline"
)

// FileSafe keeps letters, digits, dashes and underscores of s, for file
// names.
func FileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, s)
}

// ReportFileName is the name of run runID's Markdown report file, the same
// in the run's thread and wherever the report is shared.
func ReportFileName(runID string) string { return "research-" + FileSafe(runID) + ".md" }

// ReportFileTitle is the title of r's Markdown report file (r.Report is
// set).
func ReportFileTitle(r *pipeline.Run) string {
	return Truncate(OneLine(FirstNonEmpty(r.Report.Title, "Research report")), 200)
}
