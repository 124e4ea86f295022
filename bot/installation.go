package bot

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// installation is who the bot is in Slack: the workspace its bot token was
// installed in and the app it belongs to. researchbot serves one workspace
// (the manifest does not enable org-wide deployment), so every slash
// command, interaction and event must name this team and this app; anything
// else is refused and changes nothing.
type installation struct {
	TeamID    string
	AppID     string
	BotUserID string
}

// learnInstallation asks Slack who the bot token belongs to: auth.test names
// the workspace and the bot, and bots.info names the bot's app. Both answers
// come from the token itself, so they hold whatever a payload claims. A
// failure is an *identifyError naming the method.
func (a *App) learnInstallation(ctx context.Context) (installation, error) {
	return identifier{send: a.send}.learn(ctx)
}

// identifier learns the installation with a bot token's Sender: the App's,
// or the start-up check's (CheckTokens).
type identifier struct{ send *Sender }

// learn is App.learnInstallation.
func (i identifier) learn(ctx context.Context) (installation, error) {
	who, err := i.send.AuthTest(ctx)
	if err != nil {
		return installation{}, &identifyError{method: "auth.test", err: err}
	}
	if who.TeamID == "" || who.BotID == "" {
		return installation{}, &identifyError{method: "auth.test", wrong: true, err: fmt.Errorf("auth.test named no workspace or no bot (team %q, bot %q)", who.TeamID, who.BotID)}
	}
	bot, err := i.send.BotInfo(ctx, who.BotID)
	if err != nil {
		return installation{}, &identifyError{method: "bots.info", err: err}
	}
	if bot.AppID == "" {
		return installation{}, &identifyError{method: "bots.info", wrong: true, err: fmt.Errorf("bots.info named no app for bot %s", who.BotID)}
	}
	return installation{TeamID: who.TeamID, AppID: bot.AppID, BotUserID: who.UserID}, nil
}

// requestOrigin is the workspace and app a request says it comes from.
type requestOrigin struct {
	team, app string
	// anyApp is set for shortcuts: Slack's shortcut payloads carry no
	// api_app_id, and they reach only the app whose socket they arrive on.
	anyApp bool
}

// originOf reads the team and app of a slash command, interaction or event.
func originOf(evt socketmode.Event) (requestOrigin, bool) {
	switch d := evt.Data.(type) {
	case slack.SlashCommand:
		return requestOrigin{team: d.TeamID, app: d.APIAppID}, true
	case slack.InteractionCallback:
		team := d.Team.ID
		team = cmp.Or(team, d.User.TeamID)
		shortcut := d.Type == slack.InteractionTypeShortcut || d.Type == slack.InteractionTypeMessageAction
		return requestOrigin{team: team, app: d.APIAppID, anyApp: shortcut && d.APIAppID == ""}, true
	case slackevents.EventsAPIEvent:
		return requestOrigin{team: d.TeamID, app: d.APIAppID}, true
	}
	return requestOrigin{}, false
}

// foreign says why o is not this installation, or "" when it is.
func (in *installation) foreign(o requestOrigin) string {
	switch {
	case in == nil:
		return "the installation is not known yet"
	case o.app != in.AppID && !o.anyApp:
		return "another app"
	case o.team != in.TeamID:
		return "another workspace"
	}
	return ""
}

// foreignNotice is what the person behind a refused request is told.
func foreignNotice() ([]slack.Block, string) {
	return blockkit.RenderError("This researchbot is not installed for the workspace or app this request came from, so it did nothing.",
		"If you expected it to answer here, ask whoever runs researchbot."), "researchbot is not installed here"
}

// slackHosted reports whether a response_url points at Slack (or at the
// Slack API host researchbot is configured with), so that a refused request
// never makes researchbot post anywhere its payload chooses.
func slackHosted(responseURL, apiURL string) bool {
	u, err := url.Parse(responseURL)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "slack.com" || strings.HasSuffix(host, ".slack.com") {
		return u.Scheme == "https"
	}
	api, err := url.Parse(apiURL)
	return err == nil && api.Host != "" && strings.EqualFold(api.Host, u.Host) && api.Scheme == u.Scheme
}

// refuseForeign answers a request from outside the installation: it changes
// nothing, tells the person where Slack lets it (in the ack of a command or
// a form, or through the click's response_url), and logs why.
func (a *App) refuseForeign(k *acker, d delivery, evt socketmode.Event, o requestOrigin, why string) {
	a.guardMetrics.refused(d.kind)
	want := a.install.Load()
	if want == nil {
		want = &installation{}
	}
	a.log.Warn("bot: refused a request from outside this installation; nothing was done",
		"kind", d.kind, "reason", why, "team_id", o.team, "app_id", o.app,
		"want_team_id", want.TeamID, "want_app_id", want.AppID, "user", userOf(evt))
	blocks, text := foreignNotice()
	switch data := evt.Data.(type) {
	case slack.SlashCommand:
		k.ack(ephemeralPayload(blocks, text))
	case slack.InteractionCallback:
		switch data.Type {
		case slack.InteractionTypeViewSubmission:
			k.ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blocks)))
		case slack.InteractionTypeBlockActions:
			k.ack(nil)
			if !slackHosted(data.ResponseURL, a.cfg.APIURL) {
				return
			}
			_ = a.pool.submit(func(ctx context.Context) { // when the pool is full, the log says it all
				if err := a.send.RespondEphemeral(ctx, data.ResponseURL, data.Channel.ID, blocks, text); err != nil {
					a.log.Warn("bot: could not tell a refused click why", "err", err)
				}
			})
		default:
			k.ack(nil)
		}
	default:
		k.ack(nil)
	}
}

// userOf is the user behind a request, for logs.
func userOf(evt socketmode.Event) string {
	switch d := evt.Data.(type) {
	case slack.SlashCommand:
		return d.UserID
	case slack.InteractionCallback:
		return d.User.ID
	case slackevents.EventsAPIEvent:
		if m, ok := d.InnerEvent.Data.(*slackevents.MessageEvent); ok {
			return m.User
		}
	}
	return ""
}

// checkSocketApp compares the app Slack says the Socket Mode connection
// belongs to (in its hello) with the bot token's app: when the two tokens
// belong to different apps, every request would be refused, so say so.
func (a *App) checkSocketApp(evt socketmode.Event) {
	in := a.install.Load()
	if evt.Request == nil || in == nil {
		return
	}
	if app := evt.Request.ConnectionInfo.AppID; app != "" && app != in.AppID {
		a.log.Error("bot: SLACK_APP_TOKEN and SLACK_BOT_TOKEN belong to different Slack apps; every request will be refused until both come from the same app",
			"app_token_app_id", app, "bot_token_app_id", in.AppID)
	}
}
