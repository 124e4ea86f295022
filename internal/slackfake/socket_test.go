package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/goleak"
)

func TestConnectSendsHello(t *testing.T) {
	fake := New(t)
	hello := make(chan *socketmode.Request, 1)
	connected := make(chan *socketmode.ConnectedEvent, 1)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		switch evt.Type {
		case socketmode.EventTypeHello:
			hello <- evt.Request
		case socketmode.EventTypeConnected:
			connected <- evt.Data.(*socketmode.ConnectedEvent)
		}
	})
	req := recv(t, hello)
	if req.ConnectionInfo.AppID != AppID || req.NumConnections != 1 || req.DebugInfo.Host == "" {
		t.Errorf("hello = %+v", req)
	}
	ce := recv(t, connected)
	if ce.Info == nil || ce.Info.URL == "" {
		t.Errorf("connected event without URL: %+v", ce)
	}
	if got := fake.Connections(); got != 1 {
		t.Errorf("Connections() = %d, want 1", got)
	}
	opens := fake.Calls("apps.connections.open")
	if len(opens) != 1 || opens[0].Token != fake.AppToken() {
		t.Errorf("apps.connections.open calls = %+v", opens)
	}
}

func TestSlashCommandEnvelopeAndAck(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "alice", "Europe/Berlin")
	got := make(chan slack.SlashCommand, 1)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeSlashCommand {
			got <- evt.Data.(slack.SlashCommand)
			_ = c.Ack(*evt.Request, map[string]any{"text": "working on it"})
		}
	})
	ack, err := fake.SlashCommand(testCtx(t), SlashCommand{Command: "/research", Text: "why is the sky blue", UserID: "U1", ChannelID: "C1"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := recv(t, got)
	if cmd.Command != "/research" || cmd.Text != "why is the sky blue" || cmd.UserID != "U1" || cmd.ChannelID != "C1" ||
		cmd.TeamID != TeamID || cmd.TriggerID == "" || cmd.ResponseURL == "" || cmd.UserName != "alice" || cmd.ChannelName != "research" {
		t.Errorf("slash command = %+v", cmd)
	}
	if ack.EnvelopeID == "" || ack.Type != "slash_commands" || ack.Latency <= 0 || ack.Latency > 3*time.Second {
		t.Errorf("ack = %+v", ack)
	}
	var p map[string]string
	if err := json.Unmarshal(ack.Payload, &p); err != nil || p["text"] != "working on it" {
		t.Errorf("ack payload = %s (%v)", ack.Payload, err)
	}
	if acks := fake.Acks(); len(acks) != 1 || acks[0].EnvelopeID != ack.EnvelopeID {
		t.Errorf("Acks() = %+v", acks)
	}
	// Slack shows a slash command's ack text to the user only.
	msgs := fake.Messages("C1")
	if len(msgs) != 1 || !msgs[0].Ephemeral || msgs[0].ToUser != "U1" || msgs[0].Text != "working on it" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestClickButtonDeliversBlockActions(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	got := make(chan slack.InteractionCallback, 1)
	api := startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeInteractive {
			got <- evt.Data.(slack.InteractionCallback)
			_ = c.Ack(*evt.Request, map[string]string{"note": "seen"})
		}
	})
	ctx := testCtx(t)
	_, parentTS, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("question", false))
	if err != nil {
		t.Fatal(err)
	}
	btn := slack.NewButtonBlockElement("approve", "cp-1", slack.NewTextBlockObject("plain_text", "Approve", false, false))
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionTS(parentTS),
		slack.MsgOptionBlocks(slack.NewActionBlock("plan", btn)), slack.MsgOptionText("plan", false))
	if err != nil {
		t.Fatal(err)
	}
	ack, err := fake.ClickButton(ctx, "U1", "C1", ts, "approve", "", "plan")
	if err != nil {
		t.Fatal(err)
	}
	cb := recv(t, got)
	if cb.Type != slack.InteractionTypeBlockActions || len(cb.ActionCallback.BlockActions) != 1 {
		t.Fatalf("callback = %+v", cb)
	}
	a := cb.ActionCallback.BlockActions[0]
	if a.ActionID != "approve" || a.Value != "cp-1" || a.BlockID != "plan" || a.Type != "button" {
		t.Errorf("action = %+v", a)
	}
	if cb.User.ID != "U1" || cb.Channel.ID != "C1" || cb.Container.MessageTs != ts || cb.Container.ThreadTs != parentTS ||
		cb.Message.Timestamp != ts || cb.Message.ThreadTimestamp != parentTS || cb.TriggerID == "" || cb.ResponseURL == "" {
		t.Errorf("callback = %+v", cb)
	}
	if len(cb.Message.Blocks.BlockSet) != 1 {
		t.Errorf("message blocks = %+v", cb.Message.Blocks)
	}
	if ack.Type != "interactive" || string(ack.Payload) != `{"note":"seen"}` {
		t.Errorf("ack = %+v", ack)
	}
	if _, err := fake.ClickButton(ctx, "U1", "C1", ts, "nope", "", ""); !errors.Is(err, ErrNoSuchAction) {
		t.Errorf("unknown action err = %v", err)
	}
	if _, err := fake.ClickButton(ctx, "U1", "C1", "1.000001", "approve", "", ""); !errors.Is(err, ErrNoSuchMessage) {
		t.Errorf("unknown message err = %v", err)
	}
}

func modal(callbackID string) slack.ModalViewRequest {
	input := slack.NewInputBlock("question",
		slack.NewTextBlockObject("plain_text", "Question", false, false), nil,
		slack.NewPlainTextInputBlockElement(nil, "q"))
	return slack.ModalViewRequest{
		Type: slack.VTModal, CallbackID: callbackID, PrivateMetadata: "run-42",
		Title:  slack.NewTextBlockObject("plain_text", "Edit plan", false, false),
		Submit: slack.NewTextBlockObject("plain_text", "Save", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{input}},
	}
}

func TestViewSubmissionErrorsAck(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	opened := make(chan error, 1)
	submitted := make(chan slack.InteractionCallback, 2)
	var api *slack.Client
	api = startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		switch evt.Type {
		case socketmode.EventTypeSlashCommand:
			_ = c.Ack(*evt.Request)
			cmd := evt.Data.(slack.SlashCommand)
			_, err := api.OpenViewContext(context.Background(), cmd.TriggerID, modal("edit_plan"))
			opened <- err
			// A trigger_id works once.
			_, err = api.OpenViewContext(context.Background(), cmd.TriggerID, modal("edit_plan"))
			opened <- err
		case socketmode.EventTypeInteractive:
			cb := evt.Data.(slack.InteractionCallback)
			submitted <- cb
			if cb.View.State.Values["question"]["q"].Value == "x" {
				_ = c.Ack(*evt.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{"question": "too short"}))
				return
			}
			_ = c.Ack(*evt.Request)
		}
	})
	ctx := testCtx(t)
	if _, err := fake.SlashCommand(ctx, SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, opened); err != nil {
		t.Fatalf("views.open: %v", err)
	}
	if err := recv(t, opened); err == nil || err.Error() != "exchanged_trigger_id" {
		t.Errorf("second views.open err = %v, want exchanged_trigger_id", err)
	}
	views := fake.Views()
	if len(views) != 1 || views[0].Method != "views.open" || views[0].ID == "" || views[0].UserID != "U1" {
		t.Fatalf("views = %+v", views)
	}
	view := views[0].SlackView()
	if view.CallbackID != "edit_plan" || view.PrivateMetadata != "run-42" || view.ID != views[0].ID {
		t.Errorf("recorded view = %+v", view)
	}

	ack, err := fake.SubmitView(ctx, "U1", view, map[string]map[string]slack.BlockAction{"question": {"q": {Value: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	cb := recv(t, submitted)
	if cb.Type != slack.InteractionTypeViewSubmission || cb.View.ID != view.ID || cb.View.CallbackID != "edit_plan" ||
		cb.View.PrivateMetadata != "run-42" || cb.View.State.Values["question"]["q"].Type != "plain_text_input" {
		t.Errorf("submission = %+v", cb.View)
	}
	va, err := ack.ViewSubmission()
	if err != nil {
		t.Fatal(err)
	}
	if va.ResponseAction != "errors" || va.Errors["question"] != "too short" {
		t.Errorf("view ack = %+v", va)
	}

	// A valid submission is acked empty, which closes the modal.
	ack, err = fake.SubmitView(ctx, "U1", view, map[string]map[string]slack.BlockAction{"question": {"q": {Value: "a real question"}}})
	if err != nil {
		t.Fatal(err)
	}
	if va, _ := ack.ViewSubmission(); va.ResponseAction != "" || len(ack.Payload) != 0 {
		t.Errorf("second ack = %+v", ack)
	}
	if _, err := fake.SubmitView(ctx, "U1", view, nil); !errors.Is(err, ErrViewClosed) {
		t.Errorf("submit after close err = %v", err)
	}
}

func TestViewClosedOnlyWhenNotifyOnClose(t *testing.T) {
	fake := New(t)
	closed := make(chan slack.InteractionCallback, 1)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeInteractive {
			closed <- evt.Data.(slack.InteractionCallback)
			_ = c.Ack(*evt.Request)
		}
	})
	ctx := testCtx(t)
	v := slack.View{ID: "V1", Type: slack.VTModal, CallbackID: "cb", NotifyOnClose: true}
	ack, err := fake.CloseView(ctx, "U1", v)
	if err != nil || ack.EnvelopeID == "" {
		t.Fatalf("CloseView = %+v, %v", ack, err)
	}
	if cb := recv(t, closed); cb.Type != slack.InteractionTypeViewClosed || cb.View.ID != "V1" {
		t.Errorf("view_closed = %+v", cb)
	}
	ack, err = fake.CloseView(ctx, "U1", slack.View{ID: "V2", Type: slack.VTModal})
	if err != nil || ack.EnvelopeID != "" {
		t.Errorf("CloseView without notify_on_close = %+v, %v", ack, err)
	}
}

func TestServerPingsKeepClientAliveAndPong(t *testing.T) {
	fake := New(t, WithPingInterval(50*time.Millisecond))
	startBot(t, fake, ackAll, socketmode.OptionPingInterval(400*time.Millisecond))
	ctx := testCtx(t)
	rtt, err := fake.Ping(ctx)
	if err != nil || rtt <= 0 {
		t.Fatalf("Ping = %v, %v", rtt, err)
	}
	// The client drops a connection that sees no ping for 400ms; the
	// server's pings keep this one alive.
	time.Sleep(time.Second)
	if got := fake.Connections(); got != 1 {
		t.Errorf("Connections() = %d after 1s, want 1 (pings not seen?)", got)
	}
}

func TestDisconnectRefreshRequestedReconnects(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	startBot(t, fake, ackAll)
	ctx := testCtx(t)
	fake.Disconnect("refresh_requested")
	if err := fake.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if got := fake.Connections(); got != 2 {
		t.Errorf("Connections() = %d, want 2", got)
	}
	if got := len(fake.Calls("apps.connections.open")); got != 2 {
		t.Errorf("apps.connections.open calls = %d, want 2", got)
	}
	ack, err := fake.SlashCommand(ctx, SlashCommand{Command: "/research", Text: "after", UserID: "U1", ChannelID: "C1"})
	if err != nil || ack.EnvelopeID == "" {
		t.Fatalf("slash command after reconnect: %+v, %v", ack, err)
	}
}

func TestDropConnectionReconnects(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	startBot(t, fake, ackAll)
	ctx := testCtx(t)
	fake.DropConnection()
	if err := fake.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.SlashCommand(ctx, SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
}

func TestPostUserMessageEventInThread(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	got := make(chan *slackevents.MessageEvent, 1)
	api := startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeEventsAPI {
			_ = c.Ack(*evt.Request)
			ev := evt.Data.(slackevents.EventsAPIEvent)
			if m, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent); ok {
				got <- m
			}
		}
	})
	ctx := testCtx(t)
	_, parent, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionText("What should we watch?", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.PostUserMessage(ctx, "U1", "C1", parent, "competitors: acme"); err != nil {
		t.Fatal(err)
	}
	m := recv(t, got)
	if m.User != "U1" || m.Channel != "C1" || m.ThreadTimeStamp != parent || m.Text != "competitors: acme" || m.TimeStamp == "" {
		t.Errorf("message event = %+v", m)
	}
	th := fake.Thread("C1", parent)
	if len(th) != 2 || th[1].User != "U1" || th[1].Text != "competitors: acme" {
		t.Errorf("thread = %+v", th)
	}
}

func TestEnvelopeWithoutAckTimesOut(t *testing.T) {
	fake := New(t)
	startBot(t, fake, func(socketmode.Event, *socketmode.Client) {})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := fake.SlashCommand(ctx, SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
}

func TestResponseURLReplacesOriginal(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	api := startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeInteractive {
			_ = c.Ack(*evt.Request)
			cb := evt.Data.(slack.InteractionCallback)
			_, _, _ = c.PostMessageContext(context.Background(), "", slack.MsgOptionReplaceOriginal(cb.ResponseURL),
				slack.MsgOptionText("Approved by <@U1>", false))
		}
	})
	ctx := testCtx(t)
	btn := slack.NewButtonBlockElement("approve", "cp-1", slack.NewTextBlockObject("plain_text", "Approve", false, false))
	_, ts, err := api.PostMessageContext(ctx, "C1", slack.MsgOptionBlocks(slack.NewActionBlock("plan", btn)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.ClickButton(ctx, "U1", "C1", ts, "approve", "", ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(fake.Calls("response_url")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	msgs := fake.Messages("C1")
	if len(msgs) != 1 || msgs[0].Text != "Approved by <@U1>" || msgs[0].Updated != 1 || len(msgs[0].Blocks) != 0 {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestViewSubmissionUpdateRecordsNewVersion(t *testing.T) {
	fake := New(t)
	startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeInteractive {
			next := modal("step2")
			_ = c.Ack(*evt.Request, slack.NewUpdateViewSubmissionResponse(&next))
		}
	})
	api := newAPI(fake)
	ctx := testCtx(t)
	fake.mu.Lock()
	trig := fake.issueTrigger("", "U1")
	fake.mu.Unlock()
	opened, err := api.OpenViewContext(ctx, trig, modal("step1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.SubmitView(ctx, "U1", opened.View, nil); err != nil {
		t.Fatal(err)
	}
	vs := fake.Views()
	if len(vs) != 2 || vs[1].Method != "ack:update" || vs[1].ID != opened.ID || vs[1].SlackView().CallbackID != "step2" {
		t.Errorf("views = %+v", vs)
	}
}

func TestNoGoroutinesLeftAfterClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	t.Run("session", func(t *testing.T) {
		fake := New(t, WithPingInterval(10*time.Millisecond))
		fake.AddChannel("C1", "research", true)
		startBot(t, fake, ackAll)
		if _, err := fake.SlashCommand(testCtx(t), SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"}); err != nil {
			t.Fatal(err)
		}
		fake.Disconnect("refresh_requested")
		if err := fake.WaitConnections(testCtx(t), 2); err != nil {
			t.Fatal(err)
		}
	})
}

func TestConcurrentEnvelopesAllAcked(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	startBot(t, fake, ackAll)
	ctx := testCtx(t)
	const n = 20
	errs := make(chan error, n)
	ids := make(chan string, n)
	for i := range n {
		go func() {
			ack, err := fake.SlashCommand(ctx, SlashCommand{Command: "/research", Text: fmt.Sprint(i), UserID: "U1", ChannelID: "C1"})
			errs <- err
			ids <- ack.EnvelopeID
		}()
	}
	seen := map[string]bool{}
	for range n {
		if err := recv(t, errs); err != nil {
			t.Error(err)
		}
		seen[recv(t, ids)] = true
	}
	if len(seen) != n || len(fake.Acks()) != n {
		t.Errorf("distinct envelope ids = %d, acks = %d, want %d", len(seen), len(fake.Acks()), n)
	}
}

func TestClickButtonOnEphemeralMessage(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	got := make(chan slack.InteractionCallback, 1)
	api := startBot(t, fake, func(evt socketmode.Event, c *socketmode.Client) {
		if evt.Type == socketmode.EventTypeInteractive {
			_ = c.Ack(*evt.Request)
			got <- evt.Data.(slack.InteractionCallback)
		}
	})
	ctx := testCtx(t)
	btn := slack.NewButtonBlockElement("cancel", "run-1", slack.NewTextBlockObject("plain_text", "Cancel", false, false))
	ts, err := api.PostEphemeralContext(ctx, "C1", "U1", slack.MsgOptionBlocks(slack.NewActionBlock("b", btn)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.ClickButton(ctx, "U1", "C1", ts, "cancel", "", ""); err != nil {
		t.Fatal(err)
	}
	cb := recv(t, got)
	if !cb.Container.IsEphemeral || cb.Container.MessageTs != ts || cb.Message.Timestamp != "" ||
		cb.ActionCallback.BlockActions[0].Value != "run-1" {
		t.Errorf("callback = %+v", cb)
	}
}
