package slackfake

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func slackCode(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestStreamLifecycle: slack-go's StartStream/AppendStream/StopStream
// against the fake keep the stream's tasks, sources and text, and the
// documented refusals hold.
func TestStreamLifecycle(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ada", "UTC")
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	ctx := context.Background()
	dm := DMChannelID("U1")
	_, root, err := api.PostMessageContext(ctx, dm, slack.MsgOptionText("question", false))
	if err != nil {
		t.Fatal(err)
	}
	plan := slack.NewTaskUpdateChunk("plan", "Planning")
	plan.Status = slack.TaskCardStatusInProgress
	ch, ts, err := api.StartStreamContext(ctx, dm, slack.MsgOptionTS(root), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModePlan), slack.MsgOptionChunks(plan))
	if err != nil || ch != dm || ts == "" {
		t.Fatalf("start = %s %s %v", ch, ts, err)
	}
	// chat.update cannot touch a message that is still streaming.
	if _, _, _, err := api.UpdateMessageContext(ctx, dm, ts, slack.MsgOptionText("x", false)); slackCode(err) != "streaming_state_conflict" {
		t.Errorf("update while streaming: %v", err)
	}
	plan.Status = slack.TaskCardStatusComplete
	read := slack.NewTaskUpdateChunk("read", "Reading")
	read.Status = slack.TaskCardStatusComplete
	read.Sources = []slack.TaskCardSource{slack.NewTaskCardSource("https://example.com/a", "A")}
	if _, _, err := api.AppendStreamContext(ctx, dm, ts, slack.MsgOptionChunks(plan, read)); err != nil {
		t.Fatal(err)
	}
	bad := slack.NewTaskUpdateChunk("x", "X")
	bad.Status = "done"
	if _, _, err := api.AppendStreamContext(ctx, dm, ts, slack.MsgOptionChunks(bad)); slackCode(err) != "invalid_chunks" {
		t.Errorf("a task of status done: %v, want invalid_chunks", err)
	}
	noTitle := slack.NewTaskUpdateChunk("y", "")
	noTitle.Status = slack.TaskCardStatusPending
	if _, _, err := api.AppendStreamContext(ctx, dm, ts, slack.MsgOptionChunks(noTitle)); slackCode(err) != "invalid_chunks" {
		t.Errorf("a task without title: %v, want invalid_chunks", err)
	}
	if _, _, err := api.AppendStreamContext(ctx, dm, ts, slack.MsgOptionChunks(slack.NewMarkdownTextChunk(strings.Repeat("a", 12001)))); slackCode(err) != "invalid_chunks" {
		t.Errorf("12,001 characters of Markdown: %v, want invalid_chunks", err)
	}
	if _, _, err := api.StopStreamContext(ctx, dm, ts, slack.MsgOptionChunks(slack.NewMarkdownTextChunk("**Done.**"))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.AppendStreamContext(ctx, dm, ts, slack.MsgOptionChunks(plan)); slackCode(err) != "message_not_in_streaming_state" {
		t.Errorf("append after stop: %v", err)
	}
	if _, _, err := api.StopStreamContext(ctx, dm, ts); slackCode(err) != "message_not_in_streaming_state" {
		t.Errorf("stop after stop: %v", err)
	}
	st, ok := fake.StreamAt(dm, ts)
	if !ok || st.Open || st.TaskMode != "plan" || st.ThreadTS != root || st.Markdown != "**Done.**" || !st.StoppedWithContent {
		t.Fatalf("stream = %+v", st)
	}
	if len(st.Tasks) != 2 || st.Tasks[0].Status != "complete" || st.Tasks[0].Updates != 2 {
		t.Errorf("tasks = %+v", st.Tasks)
	}
	if r, _ := st.Task("read"); len(r.Sources) != 1 || r.Sources[0].URL != "https://example.com/a" || r.Sources[0].Type != "url" {
		t.Errorf("read = %+v", r)
	}
	if th := fake.Thread(dm, root); len(th) != 2 || th[1].TS != ts || th[1].Text != "**Done.**" {
		t.Errorf("thread = %+v", th)
	}
}

// TestStreamRefusals: a channel stream needs its recipient, a stream needs
// a thread, and a workspace without the feature refuses every call.
func TestStreamRefusals(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ada", "UTC")
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	ctx := context.Background()
	if _, _, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS("1.000001")); slackCode(err) != "missing_recipient_user_id" {
		t.Errorf("channel without recipient: %v", err)
	}
	if _, _, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS("1.000001"), slack.MsgOptionRecipientUserID("U1")); slackCode(err) != "missing_recipient_team_id" {
		t.Errorf("channel without team: %v", err)
	}
	if _, _, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(TeamID)); slackCode(err) != "invalid_arguments" {
		t.Errorf("no thread_ts: %v", err)
	}
	if _, ts, err := api.StartStreamContext(ctx, "C1", slack.MsgOptionTS("1.000001"), slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(TeamID)); err != nil || ts == "" {
		t.Errorf("channel stream with recipient: %v", err)
	}
	fake.DisableStreaming("team_not_allowed")
	if _, _, err := api.StartStreamContext(ctx, DMChannelID("U1"), slack.MsgOptionTS("1.000001")); slackCode(err) != "team_not_allowed" {
		t.Errorf("disabled: %v", err)
	}
	if n := len(fake.Streams()); n != 1 {
		t.Errorf("%d streams, want 1", n)
	}
}
