package bot

import (
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
)

// researchFromMention starts a research from an @mention outside any
// thread ("@researchbot how do heat pumps cope with frost?"), in the
// mention's channel, as /research would there, with the action token the
// mention carried (so workspace search can search on the person's behalf).
// A mention without a question says how to ask.
func (a *App) researchFromMention(ctx context.Context, req *Request, m Mention) error {
	c, err := ParseCommand(m.Text)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return Tell(blockkit.RenderError(ue.Msg, ""), "Not understood")
	case err != nil:
		return err
	case m.Text == "" || c.Kind != CmdResearch:
		return Tell(blockkit.RenderError("Ask me about a report in its research thread: mention me there with your question.", "To research something new, mention me with your question, or use `/research &lt;question&gt;`."), "Ask in a research thread")
	}
	start := &Request{
		UserID: m.User, TeamID: req.TeamID, Channel: m.Channel,
		Command: &slack.SlashCommand{TeamID: req.TeamID, ChannelID: m.Channel, UserID: m.User},
		Parsed:  c, Log: req.Log, send: a.send, app: a, ActionToken: req.ActionToken,
	}
	a.serve(ctx, a.startResearch, start)
	return nil
}
