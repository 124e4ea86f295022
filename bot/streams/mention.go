package streams

import (
	"context"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/scheduler"
)

var _ bot.MentionHandler = (*Feature)(nil)

// HandleMention takes an @mention in a stream creation thread as the typed
// answer to the conversation's question, when the person creating the
// stream wrote it; it reports whether the thread is a stream conversation
// (then the mention is its, whoever wrote it). What it cannot take is
// returned as a *bot.UserError.
func (s *Feature) HandleMention(ctx context.Context, m bot.Mention) (bool, error) {
	c, v, ok, err := s.convs.Get(ctx, m.Channel, m.Thread)
	if err != nil {
		s.log.Error("bot: loading a stream conversation failed", "channel", m.Channel, "err", err)
		return false, nil
	}
	if !ok {
		return false, nil
	}
	switch {
	case c.Step == scheduler.StepComplete:
		return true, bot.Tell(blockkit.RenderError("This stream is set up already.", "`/research stream show NAME` shows it; `/research stream edit NAME` changes it."), "Stream set up")
	case m.User != c.Spec.Owner:
		return true, bot.Tell(blockkit.RenderError("Only "+blockkit.Who(c.Spec.Owner)+", who is setting up this stream, can answer here.", "Nothing was changed. Start your own with `/research stream new`."), "Not your conversation")
	case m.Text == "":
		return true, bot.Tell(blockkit.RenderError("Write your answer after the mention.", "For example: _@researchbot competitors in heat pumps_"), "Write your answer")
	}
	return true, s.advance(ctx, m.Channel, m.Thread, m.User, c, v, scheduler.ConversationAction{Kind: scheduler.ActionTextInput, Text: m.Text}, nil)
}
