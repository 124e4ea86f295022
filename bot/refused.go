package bot

import (
	"errors"
	"fmt"
	"slices"

	"github.com/slack-go/slack"
)

// What to do about a refused token, said at start (CheckTokens) and when
// Slack refuses a token later (Run).
const (
	botTokenFix = "copy the Bot User OAuth Token (xoxb-…) from your Slack app's OAuth & Permissions page, and reinstall the app if it was revoked"
	appTokenFix = "generate an app-level token (xapp-…) with the connections:write scope under Basic Information → App-Level Tokens, and turn Socket Mode on"
	appsPage    = "https://api.slack.com/apps"
)

// refusedCodes are Slack's answers meaning a token no longer works: asking
// again cannot help.
var refusedCodes = []string{"invalid_auth", "token_revoked", "account_inactive", "not_authed"}

// identifyError is a failure to learn the installation with the bot token.
type identifyError struct{ err error }

func (e *identifyError) Error() string {
	return "learning which workspace and app SLACK_BOT_TOKEN belongs to: " + e.err.Error()
}

func (e *identifyError) Unwrap() error { return e.err }

// refusedCode returns Slack's code when err says a token no longer works,
// or "".
func refusedCode(err error) string {
	for ; err != nil; err = errors.Unwrap(err) {
		code := err.Error() // socketmode returns apps.connections.open's code as a bare error
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			code = se.Err
		}
		if slices.Contains(refusedCodes, code) {
			return code
		}
	}
	return ""
}

// appTokenRefused words Slack refusing the app-level token after start.
func appTokenRefused(err error) error {
	return fmt.Errorf("SLACK_APP_TOKEN: Slack answered %q to apps.connections.open after the bot had started (token revoked or app uninstalled?): %s at %s (reinstall the app if it was removed), then restart researchbot",
		err.Error(), appTokenFix, appsPage)
}

// botTokenRefused words Slack refusing the bot token after start.
func botTokenRefused(err error) error {
	return fmt.Errorf("SLACK_BOT_TOKEN: Slack answered %q to auth.test after the bot had started (token revoked or app uninstalled?): %s at %s, then restart researchbot",
		err.Error(), botTokenFix, appsPage)
}

// tokenRefused stops the bot when err (from connecting) says Slack refuses
// a token, and reports whether it did.
func (a *App) tokenRefused(err error) bool {
	code := refusedCode(err)
	if code == "" {
		return false
	}
	var ie *identifyError
	if errors.As(err, &ie) {
		a.refuse(botTokenRefused(errors.New(code)))
	} else {
		a.refuse(appTokenRefused(errors.New(code)))
	}
	return true
}

// refuse marks the bot not ready, logs why once, and makes Run stop with
// err: reconnecting with a refused token would fail for ever.
func (a *App) refuse(err error) {
	a.connected.Store(false)
	a.refusedOnce.Do(func() {
		a.log.Error("bot: Slack refused a token; stopping", "err", err)
		a.refused <- err
	})
}
