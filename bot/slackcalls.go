package bot

import (
	"context"
	"errors"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"
)

// maxRateLimitRetries bounds how often one call is retried after a 429.
const maxRateLimitRetries = 3

// retry429 calls fn and, when Slack answers 429, waits for its Retry-After
// on clk (bounded by ctx) and calls it again, at most maxRateLimitRetries
// times.
func retry429(ctx context.Context, clk quartz.Clock, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt >= maxRateLimitRetries {
			return err
		}
		wait := rl.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		t := clk.NewTimer(wait, "bot", "retryafter")
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// slackErrorCode returns Slack's error code ("not_in_channel") of a Web API
// error, or "".
func slackErrorCode(err error) string {
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
