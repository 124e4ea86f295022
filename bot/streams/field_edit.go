package streams

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/scheduler"
)

// Per-field inline edit at the stream review (seed 003): the Edit button
// beside a field opens a form with that field alone; its value is checked
// as the conversation checks an answer (scheduler.ActionFieldEdit), shown
// in the form when it is refused, and otherwise saved, the old review's
// buttons taken away and the review posted again with the new value.

// fieldFormMeta is the private_metadata of the field form: where the
// conversation is, which review turn the Edit was on, and the field.
type fieldFormMeta struct {
	Channel string              `json:"c"`
	Thread  string              `json:"t"`
	Turn    int                 `json:"n"`
	Field   scheduler.SpecField `json:"f"`
}

// openFieldEdit answers an Edit button of a review: it opens the field's
// form, or says why not (not the owner, an older review).
func (s *Feature) openFieldEdit(ctx context.Context, req *bot.Request) error {
	turnNo, value := blockkit.ParseTurnValue(req.Action.Value)
	f := scheduler.SpecField(value)
	c, _, ok, err := s.convs.Get(ctx, req.Channel, req.Thread)
	switch {
	case err != nil:
		s.log.Error("bot: loading a stream conversation failed", "channel", req.Channel, "err", err)
		return bot.Tell(blockkit.RenderError("I couldn't load this conversation right now.", "Please click again in a minute."), "Try again")
	case !ok:
		return bot.Tell(blockkit.RenderError("This stream conversation has ended or expired.", "Start a new one with `/research stream new`."), "Conversation ended")
	case req.UserID != c.Spec.Owner:
		return bot.Tell(blockkit.RenderError("Only "+blockkit.Who(c.Spec.Owner)+", who is setting up this stream, can edit it here.", "Nothing was changed."), "Not your conversation")
	case turnNo != c.Last.Number || !slices.Contains(scheduler.EditableFields(c), f):
		return bot.Tell(blockkit.RenderError("That review isn't the latest one any more.", "Use the Edit buttons on my latest message."), "Not the latest review")
	}
	meta, err := json.Marshal(fieldFormMeta{Channel: req.Channel, Thread: req.Thread, Turn: turnNo, Field: f})
	if err != nil {
		return err
	}
	if _, err := s.send.OpenView(ctx, req.TriggerID, blockkit.RenderStreamFieldModal(f, scheduler.FieldInput(c, f), string(meta))); err != nil {
		s.log.Warn("bot: opening a stream field form failed", "field", f, "err", err)
		return bot.Tell(blockkit.RenderError("I couldn't open the form: "+blockkit.Escape(bot.SlackErrorCode(err))+".", "Click Edit again, or choose Change and tell me in the thread."), "Form not opened")
	}
	return nil
}

// onFieldForm takes the field form: a refused value is shown in the form
// (nothing saved); an accepted one closes it and moves the conversation on.
func (s *Feature) onFieldForm(ctx context.Context, req *bot.Request) error {
	cb := req.Callback
	var meta fieldFormMeta
	if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta); err != nil || meta.Channel == "" {
		req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("I couldn't read this form.", "Nothing was saved; click Edit on the review again."))))
		return nil
	}
	req.Channel, req.Thread = meta.Channel, meta.Thread
	var text string
	if cb.View.State != nil {
		text = cb.View.State.Values[blockkit.StreamFieldBlock][blockkit.StartInput].Value
	}
	c, v, ok, err := s.convs.Get(ctx, meta.Channel, meta.Thread)
	if err != nil || !ok || req.UserID != c.Spec.Owner {
		what := "This stream conversation has ended or expired."
		if err != nil {
			what = "I couldn't load this conversation right now."
		} else if ok {
			what = "Only " + blockkit.Who(c.Spec.Owner) + ", who is setting up this stream, can edit it."
		}
		req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError(what, "Nothing was saved."))))
		return nil
	}
	a := scheduler.ConversationAction{Kind: scheduler.ActionFieldEdit, Turn: meta.Turn, Field: meta.Field, Text: text}
	if _, _, err := scheduler.Apply(c, a, scheduler.Proposal{}); err != nil {
		var ae *scheduler.ActionError
		switch {
		case errors.Is(err, scheduler.ErrStaleChoice):
			req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("That review isn't the latest one any more, so nothing was saved.", "Use the Edit buttons on my latest message."))))
		case errors.As(err, &ae):
			req.Ack(slack.NewErrorsViewSubmissionResponse(map[string]string{blockkit.StreamFieldBlock: blockkit.CutRunes(ae.Message, 150)}))
		default:
			return err
		}
		return nil
	}
	req.Ack(nil)
	var click *clicked
	if c.Shown != "" {
		click = &clicked{ts: c.Shown, blocks: blockkit.RenderStreamTurn(c.Last, c.Spec.Owner), text: blockkit.StreamTurnText(c.Last),
			what: "edited *" + blockkit.Escape(meta.Field.Label()) + "*"}
	}
	return s.advance(ctx, meta.Channel, meta.Thread, req.UserID, c, v, a, click)
}
