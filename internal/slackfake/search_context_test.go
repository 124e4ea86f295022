package slackfake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// TestSearchContextPerUserVisibility: assistant.search.context answers in
// Slack's shape, which slack-go reads; public channels are searched for
// anyone, a private channel only for its members, and an action token
// that is missing, unknown or expired is refused.
func TestSearchContextPerUserVisibility(t *testing.T) {
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	fake := New(t, WithNow(func() time.Time { return now }))
	fake.AddChannel("C_INFRA", "infra", true)
	fake.AddUser("U_DANA", "dana", "UTC")
	fake.AddUser("U_ADA", "ada", "UTC")
	fake.AddUser("U_BOB", "bob", "UTC")
	fake.AddPrivateConversation("C_SEC", "security", "private_channel", "U_ADA", "U_DANA")
	fake.EnableSearch(time.Minute)
	march2 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	pub := fake.AddSearchableMessage("C_INFRA", "U_DANA", "The build cache moved to the new cluster.", march2)
	priv := fake.AddSearchableMessage("C_SEC", "U_DANA", "The cluster credentials rotate on Fridays.", march2)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	ctx := context.Background()
	search := func(token string, types ...string) ([]slack.AssistantSearchContextMessage, error) {
		res, err := api.SearchAssistantContextContext(ctx, slack.AssistantSearchContextParameters{
			Query: "cluster", ActionToken: token, ChannelTypes: types, Limit: 5,
		})
		if err != nil {
			return nil, err
		}
		return res.Results.Messages, nil
	}

	ada, bob := fake.IssueActionToken("U_ADA"), fake.IssueActionToken("U_BOB")
	got, err := search(ada, "public_channel")
	if err != nil || len(got) != 1 {
		t.Fatalf("public search = %+v, %v", got, err)
	}
	m := got[0]
	if m.Permalink != pub || m.ChannelID != "C_INFRA" || m.ChannelName != "infra" || m.AuthorName != "dana" || m.AuthorUserID != "U_DANA" || m.MessageTS == "" || m.Content == "" {
		t.Errorf("message = %+v", m)
	}
	if got, err := search(ada, "private_channel", "mpim", "im"); err != nil || len(got) != 1 || got[0].Permalink != priv {
		t.Errorf("ada's private search = %+v, %v; want the #security message she can read", got, err)
	}
	if got, err := search(bob, "private_channel", "mpim", "im"); err != nil || len(got) != 0 {
		t.Errorf("bob's private search = %+v, %v; want nothing: he is not in #security", got, err)
	}
	var se slack.SlackErrorResponse
	if _, err := search(""); !errors.As(err, &se) || se.Err != "invalid_action_token" {
		t.Errorf("no token: %v, want invalid_action_token", err)
	}
	file := fake.AddSearchableFile("C_SEC", "U_DANA", "Cluster runbook", "How to rotate the cluster credentials.", march2)
	res, err := api.SearchAssistantContextContext(ctx, slack.AssistantSearchContextParameters{Query: "cluster", ActionToken: ada, ChannelTypes: []string{"private_channel"}, ContentTypes: []string{"messages", "files"}})
	if err != nil || len(res.Results.Files) != 1 || len(res.Results.Messages) != 1 {
		t.Fatalf("messages and files: %+v, %v", res, err)
	}
	if f := res.Results.Files[0]; f.Permalink != file || f.Title != "Cluster runbook" || f.AuthorName != "dana" || f.Content == "" || f.DateCreated != march2.Unix() || f.FileID == "" {
		t.Errorf("file = %+v", f)
	}
	if got, _ := search(ada, "private_channel"); len(got) != 1 {
		t.Errorf("messages only: %d results, want the message alone", len(got))
	}
	if res, err := api.SearchAssistantContextContext(ctx, slack.AssistantSearchContextParameters{Query: "cluster", ActionToken: bob, ChannelTypes: []string{"private_channel"}, ContentTypes: []string{"files"}}); err != nil || len(res.Results.Files) != 0 {
		t.Errorf("bob's file search = %+v, %v; want nothing", res, err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := search(ada); !errors.As(err, &se) || se.Err != "invalid_action_token" {
		t.Errorf("expired token: %v, want invalid_action_token", err)
	}
}

// TestEventsCarryActionTokens: with search on, a DM message and an
// app_mention carry an action token in "assistant_thread", as slack-go
// reads it.
func TestEventsCarryActionTokens(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ada", "UTC")
	fake.EnableSearch(time.Minute)
	got := make(chan slackevents.EventsAPIEvent, 2)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeEventsAPI {
			_ = c.Ack(*evt.Request)
			got <- evt.Data.(slackevents.EventsAPIEvent)
		}
	})
	ctx := testCtx(t)
	if err := fake.PostUserMessage(ctx, "U1", DMChannelID("U1"), "", "heat pumps?"); err != nil {
		t.Fatal(err)
	}
	msg, ok := recv(t, got).InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || msg.AssistantThread == nil || msg.AssistantThread.ActionToken == "" {
		t.Fatalf("message event = %+v, want an action token", msg)
	}
	if err := fake.PostUserMention(ctx, "U1", "C1", "", "heat pumps?"); err != nil {
		t.Fatal(err)
	}
	mention, ok := recv(t, got).InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok || mention.AssistantThread == nil || mention.AssistantThread.ActionToken == "" || mention.AssistantThread.ActionToken == msg.AssistantThread.ActionToken {
		t.Fatalf("app_mention = %+v, want its own action token", mention)
	}
}
