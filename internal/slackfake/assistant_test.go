package slackfake

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// TestAssistantEventsInSlacksShape: opening the panel and moving beside it
// deliver assistant_thread_started and assistant_thread_context_changed as
// Slack documents them, which slack-go's parser reads.
func TestAssistantEventsInSlacksShape(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ada", "UTC")
	got := make(chan slackevents.EventsAPIEvent, 2)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeEventsAPI {
			_ = c.Ack(*evt.Request)
			got <- evt.Data.(slackevents.EventsAPIEvent)
		}
	})
	ctx := testCtx(t)
	ts, err := fake.StartAssistantThread(ctx, "U1", "C1")
	if err != nil {
		t.Fatal(err)
	}
	ev := recv(t, got)
	started, ok := ev.InnerEvent.Data.(*slackevents.AssistantThreadStartedEvent)
	if !ok || ev.TeamID != TeamID || ev.Type != "event_callback" {
		t.Fatalf("event = %+v", ev)
	}
	at := started.AssistantThread
	if at.UserID != "U1" || at.ChannelID != DMChannelID("U1") || at.ThreadTimeStamp != ts || at.Context.ChannelID != "C1" || at.Context.TeamID != TeamID || started.EventTimestamp == "" {
		t.Errorf("assistant_thread_started = %+v", started)
	}
	env, _ := fake.LastEnvelope("events_api")
	var raw struct {
		Event map[string]json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal(env.Payload, &raw); err != nil || string(raw.Event["type"]) != `"assistant_thread_started"` {
		t.Errorf("envelope = %s", env.Payload)
	}
	if th := fake.Thread(DMChannelID("U1"), ts); len(th) != 1 || th[0].User != "U1" {
		t.Errorf("the thread's root is not the user's: %+v", th)
	}

	if err := fake.ChangeAssistantContext(ctx, "U1", ts, ""); err != nil {
		t.Fatal(err)
	}
	ev = recv(t, got)
	changed, ok := ev.InnerEvent.Data.(*slackevents.AssistantThreadContextChangedEvent)
	if !ok || changed.AssistantThread.ThreadTimeStamp != ts || changed.AssistantThread.Context.ChannelID != "" {
		t.Errorf("assistant_thread_context_changed = %+v", ev.InnerEvent.Data)
	}
	if th, _ := fake.AssistantThreadAt(DMChannelID("U1"), ts); th.Context != "" || th.User != "U1" {
		t.Errorf("thread = %+v", th)
	}
}

// TestAssistantThreadsMethodsValidate: the assistant.threads methods take
// what Slack documents and refuse the rest.
func TestAssistantThreadsMethodsValidate(t *testing.T) {
	fake := New(t)
	fake.AddUser("U1", "ada", "UTC")
	startBot(t, fake, ackAll)
	ctx := testCtx(t)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	dm := DMChannelID("U1")
	ts, err := fake.StartAssistantThread(ctx, "U1", "")
	if err != nil {
		t.Fatal(err)
	}
	code := func(err error) string {
		var se slack.SlackErrorResponse
		if errors.As(err, &se) {
			return se.Err
		}
		if err != nil {
			return err.Error()
		}
		return ""
	}

	// setStatus: set, loading messages, cleared.
	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: dm, ThreadTS: ts, Status: "is researching…", LoadingMessages: []string{"planning…", "reading 12 pages…"}}); err != nil {
		t.Fatal(err)
	}
	if th, _ := fake.AssistantThreadAt(dm, ts); th.Status != "is researching…" || len(th.LoadingMessages) != 2 || th.LoadingMessages[1] != "reading 12 pages…" {
		t.Errorf("thread = %+v", th)
	}
	if err := api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: dm, ThreadTS: ts}); err != nil {
		t.Fatal(err)
	}
	if th, _ := fake.AssistantThreadAt(dm, ts); th.Status != "" || th.LoadingMessages != nil {
		t.Errorf("status not cleared: %+v", th)
	}
	eleven := strings.Split(strings.Repeat("x,", 10)+"x", ",")
	if c := code(api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: dm, ThreadTS: ts, Status: "s", LoadingMessages: eleven})); c != "invalid_arguments" {
		t.Errorf("11 loading messages: %q", c)
	}
	if c := code(api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: dm, Status: "s"})); c != "invalid_arguments" {
		t.Errorf("no thread_ts: %q", c)
	}
	if c := code(api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: dm, ThreadTS: "1.000001", Status: "s"})); c != "invalid_thread_ts" {
		t.Errorf("unknown thread: %q", c)
	}
	if c := code(api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: "D404", ThreadTS: ts, Status: "s"})); c != "channel_not_found" {
		t.Errorf("unknown channel: %q", c)
	}

	// setTitle: title required.
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: dm, ThreadTS: ts, Title: "Holidays this year"}); err != nil {
		t.Fatal(err)
	}
	if th, _ := fake.AssistantThreadAt(dm, ts); th.Title != "Holidays this year" {
		t.Errorf("title = %q", th.Title)
	}
	if c := code(api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: dm, ThreadTS: ts})); c != "invalid_arguments" {
		t.Errorf("no title: %q", c)
	}

	// setSuggestedPrompts: 1 to 4 prompts, each with a title and a message.
	prompts := func(n int, msg string) slack.AssistantThreadsSetSuggestedPromptsParameters {
		p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: dm, ThreadTS: ts, Title: "Try"}
		for range n {
			p.AddPrompt("a prompt", msg)
		}
		return p
	}
	if err := api.SetAssistantThreadsSuggestedPromptsContext(ctx, prompts(4, "go")); err != nil {
		t.Fatal(err)
	}
	if th, _ := fake.AssistantThreadAt(dm, ts); len(th.Prompts) != 4 || th.PromptsTitle != "Try" || th.Prompts[0].Message != "go" {
		t.Errorf("prompts = %+v", th)
	}
	for _, p := range []slack.AssistantThreadsSetSuggestedPromptsParameters{prompts(5, "go"), prompts(0, "go"), prompts(1, "")} {
		if c := code(api.SetAssistantThreadsSuggestedPromptsContext(ctx, p)); c != "invalid_arguments" {
			t.Errorf("%d prompts (message %q): %q", len(p.Prompts), p.Prompts, c)
		}
	}

	// A workspace without the feature refuses every call.
	fake.DisableAssistant("feature_not_enabled")
	if c := code(api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: dm, ThreadTS: ts, Title: "t"})); c != "feature_not_enabled" {
		t.Errorf("disabled: %q", c)
	}
	fake.DisableAssistant("")
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: dm, ThreadTS: ts, Title: "t"}); err != nil {
		t.Errorf("enabled again: %v", err)
	}
}
