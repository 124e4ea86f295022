package streams

// The guided creation conversation in a thread: starting it, the clicks on its
// turns, advancing it through the model (compare-and-set), creating the stream
// on confirmation, and the dry run offered afterwards.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// userTZ is user's Slack profile time zone, "" when unknown.
func (s *Feature) userTZ(ctx context.Context, user string) string {
	u, err := s.send.UserInfo(ctx, user)
	if err != nil {
		s.log.Warn("bot: users.info failed; the stream's time zone defaults to UTC", "user", user, "err", err)
		return ""
	}
	return u.TZ
}

// startConversation opens a creation thread: the root message, then the
// first turn in its thread, and the conversation stored under the thread.
func (s *Feature) startConversation(ctx context.Context, cmd bot.StreamCommand) error {
	tz := s.userTZ(ctx, cmd.UserID)
	conv, turn := scheduler.BeginConversation(cmd.UserID, cmd.ChannelID, tz, s.clock.Now())
	if cmd.InThread != "" {
		return s.converseIn(ctx, cmd.InChannel, cmd.InThread, conv, turn)
	}
	root, err := s.send.Post(ctx, cmd.ChannelID, "", blockkit.RenderStreamRoot(cmd.UserID), "New research stream")
	if err != nil {
		if bot.NotInChannel(err) {
			return bot.Tell(blockkit.RenderInviteHelp(cmd.ChannelID), "Invite me first: /invite @researchbot")
		}
		s.log.Error("bot: posting a stream conversation failed", "user", cmd.UserID, "err", err)
		return bot.Tell(blockkit.RenderError("I couldn't start the conversation here: "+blockkit.Escape(bot.SlackErrorCode(err))+".", "Please try again in a minute."), "Posting failed")
	}
	if _, err := s.convs.Create(ctx, cmd.ChannelID, root, conv); err != nil {
		s.log.Error("bot: storing a stream conversation failed", "err", err)
		s.post(ctx, cmd.ChannelID, root, blockkit.RenderError("I couldn't save this conversation: my storage is not answering.", "Please run `/research stream new` again in a few minutes."), "Storage unavailable")
		return nil
	}
	s.postTurn(ctx, cmd.ChannelID, root, conv, 0, turn)
	s.log.Info("bot: stream conversation started", "user", cmd.UserID, "channel", cmd.ChannelID, "thread", root)
	return nil
}

// converseIn holds a creation conversation in an existing thread (an
// assistant panel thread): the first turn is posted there, and the
// conversation is stored under it.
func (s *Feature) converseIn(ctx context.Context, channel, thread string, conv scheduler.Conversation, turn scheduler.Turn) error {
	if _, err := s.convs.Create(ctx, channel, thread, conv); err != nil {
		s.log.Error("bot: storing a stream conversation failed", "err", err)
		return bot.Tell(blockkit.RenderError("I couldn't start the conversation: my storage is not answering.", "Please try again in a few minutes."), "Storage unavailable")
	}
	s.postTurn(ctx, channel, thread, conv, 0, turn)
	s.log.Info("bot: stream conversation started", "user", conv.Spec.Owner, "channel", conv.Spec.Channel, "thread", thread)
	return nil
}

// clicked is the message whose button moved the conversation on.
type clicked struct {
	ts     string
	blocks []slack.Block
	text   string
	what   string // what the user chose, for the collapsed message
}

// onAction handles a click on a stream message; a click that cannot be
// taken is answered (by bot.App) in the clicked message's thread.
func (s *Feature) onAction(ctx context.Context, req *bot.Request) error {
	cb, act := *req.Callback, *req.Action
	user, channel, thread := req.UserID, req.Channel, req.Thread
	switch act.ActionID {
	case blockkit.ActionStreamOptions:
		return nil // ticking a box: read when Continue is clicked
	case blockkit.ActionStreamDeleteConfirm:
		id, name := blockkit.ParseStreamValue(act.Value)
		return s.confirmDelete(ctx, req, id, name)
	case blockkit.ActionStreamDeleteAbort:
		req.ReplaceOriginal = true
		req.Reply(ctx, []slack.Block{blockkit.Section("OK — the stream stays.")}, "Not deleted")
		return nil
	case blockkit.ActionStreamDryRun, blockkit.ActionStreamDryRunSkip:
		return s.dryRun(ctx, cb, channel, thread, act)
	case blockkit.ActionStreamEdit:
		s.editClicked(ctx, cb, channel, act)
		return nil
	}
	if strings.HasPrefix(act.ActionID, blockkit.ActionStreamFieldEdit) {
		return s.openFieldEdit(ctx, req)
	}
	turnNo, value := blockkit.ParseTurnValue(act.Value)
	var a scheduler.ConversationAction
	click := &clicked{ts: cb.Container.MessageTs, blocks: cb.Message.Blocks.BlockSet, text: cb.Message.Text}
	click.ts = cmp.Or(click.ts, cb.Message.Timestamp)
	switch {
	case strings.HasPrefix(act.ActionID, blockkit.ActionStreamPick):
		a = scheduler.ConversationAction{Kind: scheduler.ActionOptionSelected, Value: value}
		click.what = "chose *" + blockkit.EscapeTruncate(value, 200) + "*"
	case act.ActionID == blockkit.ActionStreamConfirm:
		a = scheduler.ConversationAction{Kind: scheduler.ActionOptionSelected, Value: scheduler.ReviewConfirm}
		click.what = "confirmed"
	case act.ActionID == blockkit.ActionStreamChange:
		a = scheduler.ConversationAction{Kind: scheduler.ActionOptionSelected, Value: scheduler.ReviewChange}
		click.what = "asked for a change"
	case act.ActionID == blockkit.ActionStreamContinue:
		var values []string
		if st := cb.BlockActionState; st != nil {
			for _, o := range st.Values[blockkit.StreamOptionsBlock][blockkit.ActionStreamOptions].SelectedOptions {
				values = append(values, o.Value)
			}
		}
		a = scheduler.ConversationAction{Kind: scheduler.ActionOptionsSelected, Values: values}
		click.what = "chose *" + blockkit.EscapeTruncate(strings.Join(values, ", "), 400) + "*"
	case act.ActionID == blockkit.ActionStreamSkip:
		a = scheduler.ConversationAction{Kind: scheduler.ActionSkipStep}
		click.what = "skipped this question"
	default:
		s.log.Warn("bot: unknown stream action", "action", act.ActionID)
		return nil
	}
	a.Turn = turnNo
	c, v, ok, err := s.convs.Get(ctx, channel, thread)
	switch {
	case err != nil:
		s.log.Error("bot: loading a stream conversation failed", "channel", channel, "err", err)
		return bot.Tell(blockkit.RenderError("I couldn't load this conversation right now.", "Please click again in a minute."), "Try again")
	case !ok:
		return bot.Tell(blockkit.RenderError("This stream conversation has ended or expired.", "Start a new one with `/research stream new`."), "Conversation ended")
	case user != c.Spec.Owner:
		return bot.Tell(blockkit.RenderError("Only "+blockkit.Who(c.Spec.Owner)+", who is setting up this stream, can answer here.", "Nothing was changed. Start your own with `/research stream new`."), "Not your conversation")
	}
	return s.advance(ctx, channel, thread, user, c, v, a, click)
}

// advance applies one action to the conversation of a thread: it asks the
// model when needed, stores the result (compare-and-set) and posts the next
// turn. A refused action is returned as a *bot.UserError, for the user only.
func (s *Feature) advance(ctx context.Context, channel, thread, user string, c scheduler.Conversation, version int64, a scheduler.ConversationAction, click *clicked) error {
	log := s.log.With("channel", channel, "thread", thread, "user", user, "action", a.Kind)
	if click == nil && c.Shown != "" {
		// Answered by typing: the turn's buttons go, as after a click.
		click = &clicked{ts: c.Shown, blocks: blockkit.RenderStreamTurn(c.Last, c.Spec.Owner), text: blockkit.StreamTurnText(c.Last), what: "answered by typing"}
	}
	next, turn, err := scheduler.Advance(ctx, s.model, c, a)
	var ae *scheduler.ActionError
	switch {
	case errors.As(err, &ae), errors.Is(err, scheduler.ErrModelUnavailable):
		log.Info("bot: stream conversation did not move", "reason", err)
		return bot.Tell(blockkit.RenderError(blockkit.EscapeTruncate(turn.Message, blockkit.SectionBudget-40), ""), blockkit.StreamTurnText(turn))
	case err != nil:
		log.Warn("bot: the model's proposal was refused", "err", err)
	}
	if next.Step == scheduler.StepComplete && c.Step != scheduler.StepComplete {
		return s.complete(ctx, channel, thread, user, c, version, next, click)
	}
	nv, ok, err := s.convs.Update(ctx, channel, thread, version, next)
	if err == nil && !ok {
		// The one write that may come between reading the conversation and
		// storing this answer without changing what it answers: postTurn
		// remembering where it showed the turn (an answer typed at once).
		// Store the answer on top of it; anything else is a concurrent answer.
		if cur, v, found, gerr := s.convs.Get(ctx, channel, thread); gerr == nil && found && sameButShown(c, cur) {
			if click == nil && cur.Shown != "" {
				click = &clicked{ts: cur.Shown, blocks: blockkit.RenderStreamTurn(cur.Last, cur.Spec.Owner), text: blockkit.StreamTurnText(cur.Last), what: "answered by typing"}
			}
			next.Shown = cur.Shown
			nv, ok, err = s.convs.Update(ctx, channel, thread, v, next)
		}
	}
	if err != nil || !ok {
		if err != nil {
			log.Error("bot: saving a stream conversation failed", "err", err)
		}
		return bot.Tell(blockkit.RenderError("I was still handling your previous answer, so this one was not applied.", "Please look at my latest message and answer again."), "Not applied")
	}
	if click != nil {
		s.collapse(ctx, channel, click, user)
	}
	s.postTurn(ctx, channel, thread, next, nv, turn)
	return nil
}

// sameButShown reports whether b is a with at most Shown changed.
func sameButShown(a, b scheduler.Conversation) bool {
	a.Shown, b.Shown = "", ""
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	return err == nil && bytes.Equal(ja, jb)
}

// complete creates the stream after the review was confirmed. The
// conversation is marked complete first, so a double click creates one
// stream; when the creation fails it goes back to the review.
func (s *Feature) complete(ctx context.Context, channel, thread, user string, before scheduler.Conversation, version int64, done scheduler.Conversation, click *clicked) error {
	log := s.log.With("channel", channel, "thread", thread, "user", user)
	nv, ok, err := s.convs.Update(ctx, channel, thread, version, done)
	if err != nil || !ok {
		return bot.Tell(blockkit.RenderError("This stream is already being created.", "Nothing else changed."), "Already confirmed")
	}
	st, err := s.save(ctx, done, user)
	if err != nil {
		if _, ok, rerr := s.convs.Update(ctx, channel, thread, nv, before); rerr != nil || !ok {
			log.Warn("bot: could not reopen the review after a failed creation", "err", rerr)
		}
		var what string
		switch {
		case errors.Is(err, scheduler.ErrNameTaken):
			what = "A stream called *" + blockkit.EscapeTruncate(done.Spec.Name, 100) + "* already exists, so I couldn't create this one. Choose *Change* and give it another name."
		case errors.Is(err, scheduler.ErrNameFixed):
			what = "A stream's name cannot be changed: it stays *" + blockkit.EscapeTruncate(before.Spec.Name, 100) + "*. Choose *Change* and set the name back, or create a new stream."
		case errors.Is(err, scheduler.ErrNotAllowed):
			what = "Only the stream's owner or a workspace admin can change it, so nothing was saved."
		case errors.Is(err, scheduler.ErrStreamNotFound):
			what = "This stream was deleted meanwhile, so there is nothing to save."
		case errors.Is(err, scheduler.ErrIncompleteSpec):
			what = "The configuration isn't complete yet: " + blockkit.EscapeTruncate(err.Error(), 1500) + ". Choose *Change* to fix it."
		default:
			log.Error("bot: creating a stream failed", "err", err)
			what = "I couldn't create the stream because of an internal error. Please click *Confirm* again in a minute."
		}
		s.post(ctx, channel, thread, blockkit.RenderError(what, ""), "The stream was not created")
		return nil
	}
	log.Info("bot: stream created", "stream", st.ID)
	if click != nil {
		s.collapse(ctx, channel, click, user)
	}
	if done.Editing != "" {
		log.Info("bot: stream edited", "stream", st.ID)
		s.post(ctx, channel, thread, blockkit.RenderStreamChanged(st, ":white_check_mark: Saved the changes to"), "Research stream updated: "+blockkit.EscapeTruncate(st.Spec.Name, 100))
		return nil
	}
	s.post(ctx, channel, thread, blockkit.RenderStreamCreated(st), "Research stream created: "+blockkit.EscapeTruncate(st.Spec.Name, 100))
	return nil
}

// dryRun answers the buttons offered after a stream is created.
func (s *Feature) dryRun(ctx context.Context, cb slack.InteractionCallback, channel, thread string, act slack.BlockAction) error {
	user := cb.User.ID
	id, name := blockkit.ParseStreamValue(act.Value)
	click := &clicked{ts: cb.Container.MessageTs, blocks: cb.Message.Blocks.BlockSet, text: cb.Message.Text}
	if id != "" {
		// The button is for one stream: not for another that took its name since.
		if st, err := s.svc.Show(ctx, name); err == nil && st.ID != id || errors.Is(err, scheduler.ErrStreamNotFound) {
			return bot.Tell(staleStreamButton(name), "That stream no longer exists")
		}
	}
	if act.ActionID == blockkit.ActionStreamDryRunSkip {
		st, err := s.svc.Show(ctx, name)
		if err == nil && !st.CanChange(user, false) {
			return bot.Tell(blockkit.RenderStreamNotAllowed(st, "answer for"), "Not allowed")
		}
		click.what = "skipped the dry run"
		s.collapse(ctx, channel, click, user)
		return nil
	}
	run, err := func() (*pipeline.Run, error) {
		r, err := s.svc.RunNow(ctx, name, user, false, scheduler.RunOptions{DryRun: true, Channel: channel, ThreadTS: thread})
		if errors.Is(err, scheduler.ErrNotAllowed) && s.isAdmin(ctx, user) {
			return s.svc.RunNow(ctx, name, user, true, scheduler.RunOptions{DryRun: true, Channel: channel, ThreadTS: thread})
		}
		return r, err
	}()
	if err != nil {
		return bot.Tell(s.changeProblem(ctx, err, name, "run"), "No dry run")
	}
	click.what = "started a dry run (run " + blockkit.RunRef(run.ID) + "); the digest will appear in this thread"
	s.collapse(ctx, channel, click, user)
	return nil
}

// collapse removes the controls from a clicked turn message and records the choice.
func (s *Feature) collapse(ctx context.Context, channel string, click *clicked, user string) {
	if click.ts == "" {
		return
	}
	blocks := blockkit.RenderStreamAnswered(click.blocks, click.text, user, click.what)
	if err := s.send.Update(ctx, channel, click.ts, blocks, click.text); err != nil {
		s.log.Warn("bot: collapsing a stream message failed", "channel", channel, "err", err)
	}
}
