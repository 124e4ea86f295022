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
type identifyError struct {
	method string // the Web API method that failed: auth.test or bots.info
	err    error
	// wrong is set when Slack answered, but not as it answers a bot token
	// (no workspace, no bot, no app): asking again cannot help.
	wrong bool
}

func (e *identifyError) Error() string {
	what := e.err.Error()
	if !e.wrong {
		what = e.method + ": " + what
	}
	return "learning which workspace and app SLACK_BOT_TOKEN belongs to: " + what
}

func (e *identifyError) Unwrap() error { return e.err }

// transientCodes are Slack's answers that may change if asked again later;
// every other refusal of auth.test or bots.info is for good.
var transientCodes = []string{"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}

// refusal words why the installation can never be learnt with this token,
// naming the cause and the fix, or returns nil when asking again may work
// (no answer, HTTP 5xx or 429, a transient code). It is what start-up
// (CheckTokens) and Run say about the same answer.
func (e *identifyError) refusal() error {
	if e.wrong {
		return fmt.Errorf("SLACK_BOT_TOKEN: %w: it must be the Bot User OAuth Token (xoxb-…) of the researchbot app: %s", e.err, botTokenFix)
	}
	var se slack.SlackErrorResponse
	if !errors.As(e.err, &se) || slices.Contains(transientCodes, se.Err) {
		return nil
	}
	return slackRefused(e.method, se)
}

// slackRefused words Slack refusing method for good: what the answer means
// and what to do, for the operator.
func slackRefused(method string, se slack.SlackErrorResponse) error {
	var fix string
	switch {
	case se.Err == "missing_scope" && se.Needed != "":
		fix = fmt.Sprintf("the app lacks the %s scope (the token has: %s): add it under OAuth & Permissions → Bot Token Scopes (slack-app-manifest.yaml lists every scope researchbot needs), reinstall the app to the workspace at %s, and set SLACK_BOT_TOKEN to the token the reinstall shows",
			se.Needed, orNone(se.Provided), appsPage)
	case se.Err == "missing_scope":
		fix = fmt.Sprintf("the app lacks a scope researchbot needs: update its scopes from slack-app-manifest.yaml, reinstall the app to the workspace at %s, and set SLACK_BOT_TOKEN to the token the reinstall shows", appsPage)
	case se.Err == "not_allowed_token_type":
		fix = "this is not a bot token: " + botTokenFix
	case se.Err == "team_access_not_granted":
		fix = fmt.Sprintf("the app is not granted access to this workspace: install it there (on Enterprise Grid, an org admin grants the app to the workspace) at %s", appsPage)
	case slices.Contains(refusedCodes, se.Err):
		fix = botTokenFix
	default:
		fix = fmt.Sprintf("check SLACK_BOT_TOKEN, and reinstall the app at %s", appsPage)
	}
	return fmt.Errorf("SLACK_BOT_TOKEN: Slack answered %q to %s: %s", se.Err, method, fix)
}

// orNone is s, or "none" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

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
// the bot token or the app-level token for good, and reports whether it did.
func (a *App) tokenRefused(err error) bool {
	var ie *identifyError
	if errors.As(err, &ie) {
		refusal := ie.refusal()
		if refusal == nil {
			return false
		}
		if code := refusedCode(err); code != "" {
			refusal = botTokenRefused(errors.New(code))
		}
		a.refuse(refusal)
		return true
	}
	code := refusedCode(err)
	if code == "" {
		return false
	}
	a.refuse(appTokenRefused(errors.New(code)))
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
