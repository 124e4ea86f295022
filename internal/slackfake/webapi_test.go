package slackfake

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

func newAPI(fake *Server) *slack.Client {
	return slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.AppToken()), slack.OptionAPIURL(fake.APIURL()))
}

func TestAPIURLShape(t *testing.T) {
	fake := New(t)
	if u := fake.APIURL(); !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/api/") {
		t.Errorf("APIURL() = %q", u)
	}
}

func TestChatMessagesStoredInThreads(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	ctx := testCtx(t)

	ch, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("Researching…", false))
	if err != nil || ch != "C1" || parent == "" {
		t.Fatalf("post = %q %q %v", ch, parent, err)
	}
	_, reply, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("plan", false), slack.MsgOptionTS(parent),
		slack.MsgOptionDisableLinkUnfurl(), slack.MsgOptionBlocks(slack.NewSectionBlock(
			slack.NewTextBlockObject("mrkdwn", "*Plan*", false, false), nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", parent, slack.MsgOptionText("Research: done", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PostEphemeralContext(ctx, "C1", "U2", slack.MsgOptionText("only you", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	_, tmp, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("temporary", false), slack.MsgOptionTS(parent))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, "C1", tmp); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.DeleteMessageContext(ctx, "C1", tmp); err == nil || err.Error() != "message_not_found" {
		t.Errorf("second delete err = %v", err)
	}

	th := fake.Thread("C1", parent)
	if len(th) != 3 {
		t.Fatalf("thread = %+v", th)
	}
	if th[0].TS != parent || th[0].Text != "Research: done" || th[0].Updated != 1 || th[0].User != BotUserID {
		t.Errorf("parent = %+v", th[0])
	}
	if th[1].TS != reply || th[1].ThreadTS != parent || !strings.Contains(string(th[1].Blocks), "*Plan*") ||
		th[1].UnfurlLinks == nil || *th[1].UnfurlLinks {
		t.Errorf("reply = %+v", th[1])
	}
	if !th[2].Ephemeral || th[2].ToUser != "U2" || th[2].Text != "only you" {
		t.Errorf("ephemeral = %+v", th[2])
	}
	if !tsLess(th[0].TS, th[1].TS) || !tsLess(th[1].TS, th[2].TS) {
		t.Errorf("thread not in ts order: %s %s %s", th[0].TS, th[1].TS, th[2].TS)
	}
	calls := fake.Calls("chat.postMessage")
	if len(calls) != 3 || calls[1].Params["thread_ts"] != parent || calls[0].Token != fake.BotToken() {
		t.Errorf("calls = %+v", calls)
	}
	if _, ok := calls[0].Params["token"]; ok {
		t.Error("token left in Params")
	}
}

func TestRateLimitedSurfacesRetryAfter(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	ctx := testCtx(t)
	fake.FailNext("chat.postMessage", 2, 7)
	for range 2 {
		_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false))
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
			t.Fatalf("err = %v, want RateLimitedError 7s", err)
		}
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false)); err != nil {
		t.Fatalf("third call: %v", err)
	}
	calls := fake.Calls("chat.postMessage")
	if len(calls) != 3 || calls[0].Status != http.StatusTooManyRequests || calls[0].Error != "ratelimited" || calls[2].Status != http.StatusOK {
		t.Errorf("calls = %+v", calls)
	}
	if got := len(fake.Messages("C1")); got != 1 {
		t.Errorf("messages = %d, want 1", got)
	}
}

func TestFailWithAndHook(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	ctx := testCtx(t)
	fake.FailWith("chat.update", 1, "edit_window_closed")
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", "1.1", slack.MsgOptionText("x", false)); err == nil || err.Error() != "edit_window_closed" {
		t.Errorf("FailWith err = %v", err)
	}
	fake.OnCall(func(c Call) *Reply {
		if c.Method == "chat.postMessage" && c.Params["text"] == "boom" {
			return &Reply{Status: http.StatusInternalServerError}
		}
		return nil
	})
	_, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("boom", false))
	var sce slack.StatusCodeError
	if !errors.As(err, &sce) || sce.Code != http.StatusInternalServerError {
		t.Errorf("hook err = %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("fine", false)); err != nil {
		t.Errorf("unhooked call: %v", err)
	}
}

func TestChannelErrors(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C2", "private", false)
	api := newAPI(fake)
	ctx := testCtx(t)
	if _, _, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "not_in_channel" {
		t.Errorf("not member err = %v", err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C404", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "channel_not_found" {
		t.Errorf("unknown channel err = %v", err)
	}
	info, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: "C2"})
	if err != nil || info.Name != "private" || info.IsMember {
		t.Errorf("info = %+v, %v", info, err)
	}
	if _, _, _, err := api.JoinConversationContext(ctx, "C2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C2", slack.MsgOptionText("hi", false)); err != nil {
		t.Errorf("after join: %v", err)
	}
}

func TestAuthTokens(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	ctx := testCtx(t)
	bad := slack.New("xoxb-wrong", slack.OptionAPIURL(fake.APIURL()))
	if _, _, err := bad.PostMessageContext(ctx, "C1", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("wrong token err = %v", err)
	}
	// The bot token cannot open a socket mode connection.
	wrongType := slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.BotToken()), slack.OptionAPIURL(fake.APIURL()))
	if _, _, err := wrongType.StartSocketModeContext(ctx); err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("apps.connections.open with bot token err = %v", err)
	}
	res, err := newAPI(fake).AuthTestContext(ctx)
	if err != nil || res.UserID != BotUserID || res.BotID != BotID || res.TeamID != TeamID {
		t.Errorf("auth.test = %+v, %v", res, err)
	}
}

func TestUsersInfoTimeZone(t *testing.T) {
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	fake := New(t, WithNow(func() time.Time { return now }))
	fake.AddUser("U1", "alice", "America/New_York")
	api := newAPI(fake)
	u, err := api.GetUserInfoContext(testCtx(t), "U1")
	if err != nil {
		t.Fatal(err)
	}
	if u.TZ != "America/New_York" || u.TZOffset != -5*3600 || u.TZLabel != "EST" || u.Name != "alice" {
		t.Errorf("user = %+v", u)
	}
	if _, err := api.GetUserInfoContext(testCtx(t), "U404"); err == nil || err.Error() != "user_not_found" {
		t.Errorf("unknown user err = %v", err)
	}
}

func TestUploadFileV2(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	ctx := testCtx(t)
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("report", false))
	if err != nil {
		t.Fatal(err)
	}
	content := "# Report\n\nSky is blue because of Rayleigh scattering.\n"
	sum, err := api.UploadFileContext(ctx, slack.UploadFileParameters{
		Filename: "report.md", Title: "Research report", Content: content, FileSize: len(content),
		Channel: "C1", ThreadTimestamp: parent, InitialComment: "Full report attached",
	})
	if err != nil {
		t.Fatal(err)
	}
	files := fake.Files()
	if len(files) != 1 {
		t.Fatalf("files = %+v", files)
	}
	f := files[0]
	if f.ID != sum.ID || f.Name != "report.md" || f.Title != "Research report" || string(f.Content) != content ||
		f.Channel != "C1" || f.ThreadTS != parent || !f.Completed || f.DeclaredLength != len(content) {
		t.Errorf("file = %+v", f)
	}
	th := fake.Thread("C1", parent)
	if len(th) != 2 || len(th[1].FileIDs) != 1 || th[1].FileIDs[0] != f.ID || th[1].Text != "Full report attached" {
		t.Errorf("thread = %+v", th)
	}
	if up := fake.Calls("upload"); len(up) != 1 || up[0].Token != fake.BotToken() {
		t.Errorf("upload calls = %+v", up)
	}
}

func TestUploadToNonMemberChannelFails(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C2", "private", false)
	_, err := newAPI(fake).UploadFileContext(testCtx(t), slack.UploadFileParameters{
		Filename: "r.md", Content: "x", FileSize: 1, Channel: "C2",
	})
	if err == nil || !strings.Contains(err.Error(), "not_in_channel") {
		t.Errorf("err = %v", err)
	}
}

func TestInvalidBlocksRejected(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	long := strings.Repeat("x", maxHeaderText+1)
	_, _, err := api.PostMessageContext(testCtx(t), "C1",
		slack.MsgOptionBlocks(slack.NewHeaderBlock(slack.NewTextBlockObject("plain_text", long, false, false))))
	if err == nil || err.Error() != "invalid_blocks" {
		t.Errorf("err = %v, want invalid_blocks", err)
	}
	_, _, err = api.PostMessageContext(testCtx(t), "C1", slack.MsgOptionText("", false))
	if err == nil || err.Error() != "no_text" {
		t.Errorf("empty message err = %v, want no_text", err)
	}
	if got := len(fake.Messages("C1")); got != 0 {
		t.Errorf("messages stored = %d", got)
	}
}

func TestViewsOpenNeedsFreshTrigger(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	fake := New(t, WithNow(func() time.Time { return time.Unix(0, clock.Load()) }))
	api := newAPI(fake)
	ctx := context.Background()
	if _, err := api.OpenViewContext(ctx, "bogus", modal("x")); err == nil || err.Error() != "invalid_trigger_id" {
		t.Errorf("bogus trigger err = %v", err)
	}
	fake.mu.Lock()
	trig := fake.issueTrigger("", "U1")
	fake.mu.Unlock()
	clock.Store(now.Add(4 * time.Second).UnixNano())
	if _, err := api.OpenViewContext(ctx, trig, modal("x")); err == nil || err.Error() != "expired_trigger_id" {
		t.Errorf("expired trigger err = %v", err)
	}
}

func TestViewsUpdateHashConflict(t *testing.T) {
	fake := New(t)
	api := newAPI(fake)
	ctx := testCtx(t)
	fake.mu.Lock()
	trig := fake.issueTrigger("", "U1")
	fake.mu.Unlock()
	opened, err := api.OpenViewContext(ctx, trig, modal("x"))
	if err != nil {
		t.Fatal(err)
	}
	m := modal("x")
	m.PrivateMetadata = "v2"
	updated, err := api.UpdateViewContext(ctx, m, "", opened.Hash, opened.ID)
	if err != nil || updated.ID != opened.ID || updated.PrivateMetadata != "v2" || updated.Hash == opened.Hash {
		t.Fatalf("update = %+v, %v", updated, err)
	}
	if _, err := api.UpdateViewContext(ctx, m, "", opened.Hash, opened.ID); err == nil || err.Error() != "hash_conflict" {
		t.Errorf("stale hash err = %v", err)
	}
	if vs := fake.Views(); len(vs) != 2 || vs[1].Method != "views.update" {
		t.Errorf("views = %+v", vs)
	}
}

func TestPostToUserGoesToDM(t *testing.T) {
	fake := New(t)
	fake.AddUser("U1", "alice", "UTC")
	ch, _, err := newAPI(fake).PostMessageContext(testCtx(t), "U1", slack.MsgOptionText("your digest", false))
	if err != nil || ch != DMChannelID("U1") {
		t.Fatalf("post to user = %q, %v", ch, err)
	}
	if msgs := fake.Messages(DMChannelID("U1")); len(msgs) != 1 || msgs[0].Text != "your digest" {
		t.Errorf("DM messages = %+v", msgs)
	}
}

func TestRepliesAndPermalink(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	ctx := testCtx(t)
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("q", false))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("a", false), slack.MsgOptionTS(parent)); err != nil {
		t.Fatal(err)
	}
	msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: parent})
	if err != nil || len(msgs) != 2 || msgs[1].Text != "a" || msgs[1].ThreadTimestamp != parent {
		t.Errorf("replies = %+v, %v", msgs, err)
	}
	link, err := api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: "C1", Ts: parent})
	if err != nil || !strings.Contains(link, "/archives/C1/p"+strings.ReplaceAll(parent, ".", "")) {
		t.Errorf("permalink = %q, %v", link, err)
	}
}

// TestFailMissingScope: the refusal carries Slack's scope diagnostics, which
// slack-go hands to the caller.
func TestFailMissingScope(t *testing.T) {
	fake := New(t)
	api := newAPI(fake)
	ctx := testCtx(t)
	fake.FailMissingScope("bots.info", 1, "users:read", "chat:write,commands")
	_, err := api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: BotID})
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "missing_scope" || se.Needed != "users:read" || se.Provided != "chat:write,commands" {
		t.Fatalf("err = %#v, want missing_scope needing users:read", err)
	}
	if calls := fake.Calls("bots.info"); len(calls) != 1 || calls[0].Error != "missing_scope" {
		t.Errorf("calls = %+v", calls)
	}
	if _, err := api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: BotID}); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

// TestMessageMetadataOnlyWhenAsked: chat.postMessage keeps its metadata,
// and conversations.history and conversations.replies return it only with
// include_all_metadata=true; a lost answer still posts the message.
func TestMessageMetadataOnlyWhenAsked(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := newAPI(fake)
	ctx := testCtx(t)
	md := slack.SlackMetadata{EventType: "researchbot_post", EventPayload: map[string]any{"run": "r1", "post": "root"}}
	_, root, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("root", false), slack.MsgOptionMetadata(md))
	if err != nil {
		t.Fatal(err)
	}
	fake.OnCall(func(c Call) *Reply {
		if c.Method == "chat.postMessage" {
			return &Reply{Lost: true}
		}
		return nil
	})
	md.EventPayload = map[string]any{"run": "r1", "post": "outcome"}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("outcome", false), slack.MsgOptionTS(root), slack.MsgOptionMetadata(md)); err == nil {
		t.Fatal("a lost answer reached the caller")
	}
	fake.OnCall(nil)
	if th := fake.Thread("C1", root); len(th) != 2 || !strings.Contains(string(th[1].Metadata), `"outcome"`) {
		t.Fatalf("thread = %+v, want the root and the outcome with its metadata", th)
	}
	for _, with := range []bool{false, true} {
		h, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: "C1", Limit: 10, IncludeAllMetadata: with})
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Messages) != 1 || h.Messages[0].Timestamp != root {
			t.Fatalf("history = %+v, want only the root", h.Messages)
		}
		if got := h.Messages[0].Metadata.EventPayload["post"]; (got == "root") != with {
			t.Errorf("history with include_all_metadata=%v: metadata %+v", with, h.Messages[0].Metadata)
		}
		msgs, _, _, err := api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, IncludeAllMetadata: with})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2 || (msgs[1].Metadata.EventPayload["post"] == "outcome") != with || msgs[1].Metadata.EventType != map[bool]string{true: "researchbot_post"}[with] {
			t.Errorf("replies with include_all_metadata=%v: %+v", with, msgs)
		}
	}
	if _, _, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("x", false), slack.MsgOptionMetadata(slack.SlackMetadata{EventType: ""})); err == nil || err.Error() != "invalid_metadata_format" {
		t.Errorf("metadata without event_type: err = %v", err)
	}
}
