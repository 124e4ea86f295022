package slackfake

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// feedbackButtons is a context_actions block with one feedback_buttons
// element whose buttons carry up and down.
func feedbackButtons(up, down *slack.FeedbackButton) slack.Block {
	return slack.NewContextActionsBlock("fb", slack.NewFeedbackButtonsBlockElement("feedback", up, down))
}

func thumb(text, value string) *slack.FeedbackButton {
	return slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, text, true, false), value)
}

// TestContextActionsValidated: a context_actions block with a
// feedback_buttons element is accepted within Slack's documented limits and
// refused beyond them (a missing button, empty or oversized text and value,
// a long accessibility_label, mrkdwn text, more than 5 elements, an element
// that cannot go there).
func TestContextActionsValidated(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	post := func(b slack.Block) error {
		_, _, err := api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionBlocks(b), slack.MsgOptionText("fallback", false))
		return err
	}
	ok := thumb(strings.Repeat("a", maxButtonText), strings.Repeat("v", maxButtonValue)).WithAccessibilityLabel(strings.Repeat("l", maxFeedbackLabel))
	if err := post(feedbackButtons(ok, thumb("👎", "down"))); err != nil {
		t.Errorf("a valid feedback element: %v", err)
	}
	five := make([]slack.BlockElement, maxContextActions)
	for i := range five {
		five[i] = slack.NewFeedbackButtonsBlockElement("f"+string(rune('a'+i)), thumb("👍", "up"), thumb("👎", "down"))
	}
	if err := post(slack.NewContextActionsBlock("five", five...)); err != nil {
		t.Errorf("five elements: %v", err)
	}
	mrkdwnText := thumb("up", "up")
	mrkdwnText.Text = slack.NewTextBlockObject(slack.MarkdownType, "*up*", false, false)
	bad := map[string]slack.Block{
		"no negative button":  feedbackButtons(thumb("👍", "up"), nil),
		"empty text":          feedbackButtons(thumb("", "up"), thumb("👎", "down")),
		"text too long":       feedbackButtons(thumb(strings.Repeat("a", maxButtonText+1), "up"), thumb("👎", "down")),
		"mrkdwn text":         feedbackButtons(mrkdwnText, thumb("👎", "down")),
		"empty value":         feedbackButtons(thumb("👍", ""), thumb("👎", "down")),
		"value too long":      feedbackButtons(thumb("👍", strings.Repeat("v", maxButtonValue+1)), thumb("👎", "down")),
		"label too long":      feedbackButtons(thumb("👍", "up").WithAccessibilityLabel(strings.Repeat("l", maxFeedbackLabel+1)), thumb("👎", "down")),
		"six elements":        slack.NewContextActionsBlock("six", append(five, slack.NewFeedbackButtonsBlockElement("fz", thumb("👍", "up"), thumb("👎", "down")))...),
		"no elements":         slack.NewContextActionsBlock("none"),
		"a button in context": slack.NewContextActionsBlock("btn", slack.NewButtonBlockElement("b", "v", slack.NewTextBlockObject(slack.PlainTextType, "B", false, false))),
	}
	for name, b := range bad {
		if err := post(b); err == nil || err.Error() != "invalid_blocks" {
			t.Errorf("%s: err = %v, want invalid_blocks", name, err)
		}
	}
}

// TestClickFeedbackDeliversBlockActions: a click on a native feedback
// button arrives as block_actions whose action has type feedback_buttons
// and the clicked button's value and text, with a trigger_id.
func TestClickFeedbackDeliversBlockActions(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	got := make(chan slack.InteractionCallback, 2)
	api := startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeInteractive {
			got <- evt.Data.(slack.InteractionCallback)
			_ = c.Ack(*evt.Request)
		}
	})
	ctx := testCtx(t)
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("report", false),
		slack.MsgOptionBlocks(feedbackButtons(thumb("👍", "useful|r-1"), thumb("👎", "not_useful|r-1"))))
	if err != nil {
		t.Fatal(err)
	}
	for _, positive := range []bool{true, false} {
		if _, err := fake.ClickFeedback(ctx, "U1", "C1", ts, "feedback", positive); err != nil {
			t.Fatal(err)
		}
		cb := recv(t, got)
		if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 || cb.TriggerID == "" {
			t.Fatalf("callback = %+v", cb)
		}
		a := cb.ActionCallback.BlockActions[0]
		want, text := "not_useful|r-1", "👎"
		if positive {
			want, text = "useful|r-1", "👍"
		}
		if a.Type != "feedback_buttons" || a.ActionID != "feedback" || a.BlockID != "fb" || a.Value != want || a.Text.Text != text {
			t.Errorf("action = %+v", a)
		}
	}
	btn := slack.NewButtonBlockElement("old", "r-1", slack.NewTextBlockObject(slack.PlainTextType, "Useful", false, false))
	_, oldTS, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("old", false), slack.MsgOptionBlocks(slack.NewActionBlock("a", btn)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.ClickFeedback(ctx, "U1", "C1", oldTS, "old", true); !errors.Is(err, ErrNoSuchAction) {
		t.Errorf("feedback click on a plain button: err = %v", err)
	}
}
