package bot

import (
	"errors"

	"github.com/slack-go/slack"
)

// SlackErrorCode returns Slack's error code ("not_in_channel") of an error
// from a Sender call, the error's text when Slack gave none, or "" for nil:
// what a feature names when it tells someone a post failed.
func SlackErrorCode(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// quiet are the message options every bot post uses: no link or media
// unfurling, so a page or a model cannot make Slack fetch a URL.
func quiet(blocks []slack.Block, text string) slack.MsgOption {
	return slack.MsgOptionCompose(
		slack.MsgOptionBlocks(blocks...),
		slack.MsgOptionText(text, false),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	)
}
