package slackfake

import (
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

func TestRedeliverRepeatsAnEventAsARetry(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	type seen struct {
		envelope, event string
		attempt         int
		reason          string
	}
	got := make(chan seen, 2)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		ackAll(evt, c)
		if evt.Type == socketmode.EventTypeEventsAPI {
			cb := evt.Data.(slackevents.EventsAPIEvent).Data.(*slackevents.EventsAPICallbackEvent)
			got <- seen{evt.Request.EnvelopeID, cb.EventID, evt.Request.RetryAttempt, evt.Request.RetryReason}
		}
	})
	if err := fake.PostUserMessage(testCtx(t), "U1", "C1", "", "hello"); err != nil {
		t.Fatal(err)
	}
	first := recv(t, got)
	env, ok := fake.LastEnvelope("events_api")
	if !ok || env.EnvelopeID != first.envelope || env.RetryAttempt != 0 {
		t.Fatalf("LastEnvelope = %+v, %v", env, ok)
	}
	if _, err := fake.Redeliver(testCtx(t), env.EnvelopeID, "timeout"); err != nil {
		t.Fatal(err)
	}
	again := recv(t, got)
	if again.envelope == first.envelope || again.event != first.event || again.attempt != 1 || again.reason != "timeout" {
		t.Errorf("redelivery = %+v, first = %+v: want a new envelope, the same event_id, retry_attempt 1", again, first)
	}
	if n := len(fake.Envelopes()); n != 2 {
		t.Errorf("Envelopes() has %d entries, want 2", n)
	}
	if _, err := fake.Redeliver(testCtx(t), "no-such-envelope", "timeout"); err == nil {
		t.Error("Redeliver of an unknown envelope succeeded")
	}
}

func TestRewriteEnvelopesPlaysAnotherWorkspace(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	got := make(chan slack.SlashCommand, 2)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		ackAll(evt, c)
		if evt.Type == socketmode.EventTypeSlashCommand {
			got <- evt.Data.(slack.SlashCommand)
		}
	})
	fake.RewriteEnvelopes(func(typ string, p map[string]any) {
		p["team_id"], p["api_app_id"] = "T0THEM", "A0THEM"
	})
	if _, err := fake.SlashCommand(testCtx(t), SlashCommand{Command: "/research", Text: "x", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if cmd := recv(t, got); cmd.TeamID != "T0THEM" || cmd.APIAppID != "A0THEM" {
		t.Errorf("rewritten command = %+v", cmd)
	}
	fake.RewriteEnvelopes(nil)
	if _, err := fake.SlashCommand(testCtx(t), SlashCommand{Command: "/research", Text: "x", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if cmd := recv(t, got); cmd.TeamID != TeamID || cmd.APIAppID != AppID {
		t.Errorf("command after RewriteEnvelopes(nil) = %+v", cmd)
	}
}

func TestBotsInfoNamesTheApp(t *testing.T) {
	fake := New(t)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	bot, err := api.GetBotInfo(slack.GetBotInfoParameters{Bot: BotID})
	if err != nil || bot.AppID != AppID || bot.UserID != BotUserID {
		t.Fatalf("bots.info = %+v, %v", bot, err)
	}
	if _, err := api.GetBotInfo(slack.GetBotInfoParameters{Bot: "B0NOPE"}); err == nil || err.Error() != "bot_not_found" {
		t.Errorf("bots.info for an unknown bot: %v", err)
	}
}
