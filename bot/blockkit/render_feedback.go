package blockkit

import "github.com/slack-go/slack"

// Action ids of the feedback buttons on a report (value: the run id).
const (
	ActionUseful    = "report_useful"
	ActionNotUseful = "report_not_useful"
)

// feedbackBlock is the row of 👍 / 👎 buttons under a report.
func feedbackBlock(runID string) slack.Block {
	up := slack.NewButtonBlockElement(ActionUseful, runID, Plain(":thumbsup: Useful", 75))
	down := slack.NewButtonBlockElement(ActionNotUseful, runID, Plain(":thumbsdown: Not useful", 75))
	return slack.NewActionBlock("report_feedback", up, down)
}
