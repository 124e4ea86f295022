package bot

import (
	"strings"

	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/pipeline"
)

// audienceOf is who reads a run started by user in channel (architecture
// invariant 12): in a direct message with the bot (the Messages tab, the
// assistant panel's threads — Slack's DM ids start with D), the person
// alone; anywhere else (a public or private channel, a group DM) the
// conversation's members. Whether a channel is public does not matter here:
// a public source may reach any audience, and a private conversation's
// content only that same conversation or the person alone who can read it.
// Anything not known to be a DM is a channel: the stricter reading. A run
// starts only after the bot posted its root message where it goes, and the
// bot can post in no DM but its own: a D… conversation is the person's DM
// with the bot, read by them alone.
func audienceOf(channel, user string) pipeline.Audience {
	if strings.HasPrefix(channel, "D") && user != "" {
		return pipeline.PersonAudience(channel, user)
	}
	return pipeline.ChannelAudience(channel)
}

// actionTokenOf is the action token of a message or app_mention event:
// Slack sends it in "assistant_thread" (and slack-go also reads a
// top-level "action_token").
func actionTokenOf(top string, thread *slackevents.AssistantThreadActionToken) string {
	if thread != nil && thread.ActionToken != "" {
		return thread.ActionToken
	}
	return top
}

// personToken is what a run started by req keeps of the person's
// permission: their action token when workspace search is on, nothing
// otherwise (a slash command, a shortcut or a button carries none).
func (a *App) personToken(req *Request) pipeline.PersonToken {
	if !a.cfg.Start.WorkspaceSearch {
		return ""
	}
	return pipeline.PersonToken(req.ActionToken)
}
