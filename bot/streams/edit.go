package streams

import (
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/scheduler"
)

// Editing a stream: "/research stream edit NAME" (or Edit on "stream show")
// opens a thread whose conversation starts at the review with the stream's
// current values; Confirm saves them (scheduler.Service.Edit) in one write.

// save stores what a confirmed conversation describes: a new stream, or
// the changes to the stream it edits.
func (s *Feature) save(ctx context.Context, done scheduler.Conversation, user string) (*scheduler.Stream, error) {
	if done.Editing == "" {
		return s.svc.Create(ctx, done.Spec, done.Spec.Owner)
	}
	return s.svc.Edit(ctx, done.Editing, user, s.isAdmin(ctx, user), done.Spec)
}

// postTurn posts a turn of the conversation of a thread and remembers its
// message in the conversation (stored at version; 0 reads the version), so
// typing an answer later can take that turn's buttons away. When the
// conversation moved on before the message was remembered (an answer typed
// at once), the message's buttons are taken away here.
func (s *Feature) postTurn(ctx context.Context, channel, thread string, c scheduler.Conversation, version int64, turn scheduler.Turn) {
	blocks, text := blockkit.RenderStreamTurn(turn, c.Spec.Owner), blockkit.StreamTurnText(turn)
	ts, err := s.send.Post(ctx, channel, thread, blocks, text)
	if err != nil {
		s.log.Error("bot: posting in a stream thread failed", "channel", channel, "err", err)
		return
	}
	for range 3 {
		if version > 0 {
			c.Shown = ts
			_, ok, err := s.convs.Update(ctx, channel, thread, version, c)
			if err != nil {
				s.log.Warn("bot: remembering a stream turn's message failed", "channel", channel, "err", err)
			}
			if ok || err != nil {
				return
			}
		}
		cur, v, ok, err := s.convs.Get(ctx, channel, thread)
		if err != nil || !ok {
			return
		}
		if cur.Last.Number != turn.Number {
			s.collapse(ctx, channel, &clicked{ts: ts, blocks: blocks, text: text, what: "answered"}, cur.Spec.Owner)
			return
		}
		c, version = cur, v
	}
}

// startEdit opens the edit conversation of the stream called name in
// channel, for user; problems are answered through answer.
func (s *Feature) startEdit(ctx context.Context, channel, user, name string, answer func([]slack.Block, string)) {
	st, err := s.svc.Show(ctx, name)
	if err != nil {
		answer(s.lookupProblem(err, name), "No such stream")
		return
	}
	if !st.CanChange(user, false) && !s.isAdmin(ctx, user) {
		answer(blockkit.RenderStreamNotAllowed(st, "edit"), "Not allowed")
		return
	}
	conv, turn := scheduler.StartEdit(st)
	root, err := s.send.Post(ctx, channel, "", blockkit.RenderStreamEditRoot(st, user), "Editing research stream "+blockkit.EscapeTruncate(st.Spec.Name, 100))
	if err != nil {
		if bot.NotInChannel(err) {
			answer(blockkit.RenderInviteHelp(channel), "Invite me first: /invite @researchbot")
			return
		}
		s.log.Error("bot: posting a stream edit failed", "user", user, "err", err)
		answer(blockkit.RenderError("I couldn't open the edit here: "+blockkit.Escape(bot.SlackErrorCode(err))+".", "Please try again in a minute."), "Posting failed")
		return
	}
	// The conversation is the editor's: their answers count.
	conv.Spec.Owner = user
	if _, err := s.convs.Create(ctx, channel, root, conv); err != nil {
		s.log.Error("bot: storing a stream edit failed", "err", err)
		s.post(ctx, channel, root, blockkit.RenderError("I couldn't save this conversation: my storage is not answering.", "Please run `/research stream edit` again in a few minutes."), "Storage unavailable")
		return
	}
	s.postTurn(ctx, channel, root, conv, 0, turn)
	s.log.Info("bot: stream edit started", "user", user, "stream", st.ID, "thread", root)
}

// editClicked answers the Edit button of "stream show".
func (s *Feature) editClicked(ctx context.Context, cb slack.InteractionCallback, channel string, act slack.BlockAction) {
	id, name := blockkit.ParseStreamValue(act.Value)
	if id != "" {
		if st, err := s.svc.Show(ctx, name); err == nil && st.ID != id || errors.Is(err, scheduler.ErrStreamNotFound) {
			s.send.Ephemeral(ctx, channel, cb.User.ID, "", staleStreamButton(name), "That stream no longer exists")
			return
		}
	}
	s.startEdit(ctx, channel, cb.User.ID, name, func(blocks []slack.Block, text string) {
		s.send.Ephemeral(ctx, channel, cb.User.ID, "", blocks, text)
	})
}
