package bot

import (
	"context"

	"github.com/researchbot/researchbot/scheduler"
)

var _ MentionHandler = (*Streams)(nil)

// HandleMention takes an @mention in a stream creation thread as the typed
// answer to the conversation's question, when the person creating the
// stream wrote it; it reports whether the thread is a stream conversation
// (then the mention is its, whoever wrote it).
func (s *Streams) HandleMention(ctx context.Context, m Mention) bool {
	c, v, ok, err := s.convs.Get(ctx, m.Channel, m.Thread)
	if err != nil {
		s.log.Error("bot: loading a stream conversation failed", "channel", m.Channel, "err", err)
		return false
	}
	if !ok {
		return false
	}
	switch {
	case c.Step == scheduler.StepComplete:
		s.send.Ephemeral(ctx, m.Channel, m.User, m.Thread, RenderError("This stream is set up already.", "`/research stream show NAME` shows it; `/research stream edit NAME` changes it."), "Stream set up")
	case m.User != c.Spec.Owner:
		s.send.Ephemeral(ctx, m.Channel, m.User, m.Thread, RenderError("Only "+who(c.Spec.Owner)+", who is setting up this stream, can answer here.", "Nothing was changed. Start your own with `/research stream new`."), "Not your conversation")
	case m.Text == "":
		s.send.Ephemeral(ctx, m.Channel, m.User, m.Thread, RenderError("Write your answer after the mention.", "For example: _@researchbot competitors in heat pumps_"), "Write your answer")
	default:
		s.advance(ctx, m.Channel, m.Thread, m.User, c, v, scheduler.Action{Kind: scheduler.ActionTextInput, Text: m.Text}, nil)
	}
	return true
}
