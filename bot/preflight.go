package bot

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/slack-go/slack"
)

// TokenCheck says which Slack tokens to check at start and where.
type TokenCheck struct {
	APIURL   string
	BotToken string // checked with auth.test
	// AppToken, when set, is checked with apps.connections.open (Socket Mode).
	AppToken   string
	HTTPClient *http.Client
}

// CheckTokens asks Slack whether the tokens work — the bot token with
// auth.test and bots.info, as Run will use it — and returns one error per
// problem, each naming the variable to fix and where to find the right value.
func CheckTokens(ctx context.Context, c TokenCheck) []error {
	// What Slack answers first is the answer: a 429 is not waited out.
	send := NewSender(SenderConfig{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: c.APIURL, HTTPClient: c.HTTPClient}).Paced()
	var problems []error
	if _, err := (identifier{send: send}).learn(ctx); err != nil {
		problems = append(problems, identifyProblem(c.APIURL, err))
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) {
			return problems // Slack did not answer: asking again says nothing new
		}
	}
	if c.AppToken != "" {
		if err := send.OpenConnection(ctx); err != nil {
			problems = append(problems, tokenProblem("SLACK_APP_TOKEN", "apps.connections.open", c.APIURL, err,
				"generate an app-level token (xapp-…) with the connections:write scope under Basic Information → App-Level Tokens, and turn Socket Mode on"))
		}
	}
	return problems
}

// identifyProblem words a failure to learn the installation (auth.test,
// bots.info) as Run would if it met it later: a refusal for good with its
// cause and fix, else as tokenProblem words it.
func identifyProblem(apiURL string, err error) error {
	var ie *identifyError
	if !errors.As(err, &ie) {
		return tokenProblem("SLACK_BOT_TOKEN", "auth.test", apiURL, err, botTokenFix)
	}
	if refusal := ie.refusal(); refusal != nil {
		return refusal
	}
	return tokenProblem("SLACK_BOT_TOKEN", ie.method, apiURL, ie.err, botTokenFix)
}

// tokenProblem words a failed check: a refusal names the token's variable,
// anything else (no answer) SLACK_API_URL and the network.
func tokenProblem(variable, method, apiURL string, err error, fix string) error {
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s: Slack answered %q to %s: %s", variable, err.Error(), method, fix)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("SLACK_API_URL: Slack at %s did not answer %s in time: check the network (proxy, firewall) or SLACK_API_URL", apiURL, method)
	}
	return fmt.Errorf("SLACK_API_URL: cannot reach Slack at %s for %s (%w): check the network (proxy, firewall) or SLACK_API_URL", apiURL, method, err)
}
