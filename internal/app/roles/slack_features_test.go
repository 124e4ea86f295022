package roles

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// TestSlackPlugsInTheConversation: the Slack role's App hands what is
// said in a run's thread to the features the assembly plugs in: a
// question in the thread of a run the engine does not know passes shared
// files, clarify and steering (none knows the run) and reaches the
// follow-ups, which say the run no longer exists (without them the App
// would say follow-up questions are not enabled).
func TestSlackPlugsInTheConversation(t *testing.T) {
	fake, p, wctx := startSlackRole(t)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	_, ts, err := api.PostMessageContext(wctx, "C0RESEARCH", slack.MsgOptionText("a report", false))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.App.DB.SlackMemory().RememberRunOfThread(wctx, "C0RESEARCH", ts, "run-gone", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := fake.PostUserMention(wctx, "U1", "C0RESEARCH", ts, "what did [1] say?"); err != nil {
		t.Fatal(err)
	}
	if !fake.WaitUntil(10*time.Second, func() bool {
		for _, m := range fake.Messages("C0RESEARCH") {
			if m.ThreadTS == ts && strings.Contains(string(m.Blocks), "no longer exists") {
				return true
			}
		}
		return false
	}) {
		t.Error("the question was not answered by the follow-ups")
	}
}

// startSlackRole runs a process of the Slack role on a new fake Slack
// until the test ends, connected; the context is the test's, bounded.
func startSlackRole(t *testing.T) (*slackfake.Server, *Process, context.Context) {
	t.Helper()
	fake := slackfake.New(t)
	fake.AddChannel("C0RESEARCH", "research", true)
	fake.AddUser("U1", "ana", "UTC")
	env := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "LOG_LEVEL": "warn",
		"SLACK_APP_TOKEN": fake.AppToken(), "SLACK_BOT_TOKEN": fake.BotToken(), "SLACK_API_URL": fake.APIURL()}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(context.Background(), Config{Config: cfg, Roles: []Role{Slack}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }() // owner: the test; ends with ctx
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		_ = p.Close()
	})
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(wcancel)
	if err := fake.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return fake, p, wctx
}

// TestSlackPlugsInTheFeatures: the Slack role's App routes the clicks of
// the features the assembly plugs in (bot/feedback's 👍, bot/share's
// "Share to this channel", bot/neverdomain's "Never use a site…",
// bot/followups' "Research this", bot/decisions' Approve and Edit, the
// latter on the forms' fast path): each answers the clicker about a run,
// review or question it cannot find, which only the feature says; and
// bot/home publishes the App Home when it is opened; bot/start opens the
// start form from the global shortcut; bot/assistant greets the person who
// opens the assistant panel.
func TestSlackPlugsInTheFeatures(t *testing.T) {
	fake, _, wctx := startSlackRole(t)
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	_, ts, err := api.PostMessageContext(wctx, "C0RESEARCH", slack.MsgOptionText("buttons", false), slack.MsgOptionBlocks(slack.NewActionBlock("b",
		slack.NewButtonBlockElement(blockkit.ActionUseful, "run-nope", blockkit.Plain("Useful", 75)),
		slack.NewButtonBlockElement(blockkit.ActionShare, blockkit.ShareValue("run-nope", "C0RESEARCH"), blockkit.Plain("Share", 75)),
		slack.NewButtonBlockElement(blockkit.ActionResearchFollowUp, "run-nope.f1", blockkit.Plain("Research this", 75)),
		slack.NewButtonBlockElement(blockkit.ActionApprove, "nope", blockkit.Plain("Approve", 75)),
		slack.NewButtonBlockElement(blockkit.ActionEdit, "nope", blockkit.Plain("Edit", 75))),
		slack.NewActionBlock("not-a-review", slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, blockkit.Plain("Never use a site…", 75), blockkit.ActionNeverDomain,
			slack.NewOptionBlockObject("spam.example", blockkit.Plain("Never use spam.example", 75), nil)))))
	if err != nil {
		t.Fatal(err)
	}
	for action, want := range map[string]string{blockkit.ActionUseful: "I can't find run", blockkit.ActionShare: "any more",
		blockkit.ActionNeverDomain: "doesn't belong to any source review", blockkit.ActionResearchFollowUp: "can't find this follow-up question",
		blockkit.ActionApprove: "doesn't belong to any research run", blockkit.ActionEdit: "doesn't belong to any research run"} {
		if action == blockkit.ActionNeverDomain {
			_, err = fake.SelectOption(wctx, "U1", "C0RESEARCH", ts, action, "spam.example")
		} else {
			_, err = fake.ClickButton(wctx, "U1", "C0RESEARCH", ts, action, "", "")
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fake.WaitUntil(10*time.Second, func() bool {
			for _, m := range fake.Messages("C0RESEARCH") {
				if m.Ephemeral && m.ToUser == "U1" && strings.Contains(string(m.Blocks), want) {
					return true
				}
			}
			return false
		}) {
			t.Errorf("the click on %s was not answered with %q", action, want)
		}
	}
	// bot/home: the App Home is published when opened.
	if err := fake.OpenHome(wctx, "U1"); err != nil {
		t.Fatal(err)
	}
	if !fake.WaitUntil(10*time.Second, func() bool { _, ok := fake.Home("U1"); return ok }) {
		t.Error("the App Home was not published when opened")
	}
	// bot/start: the global shortcut opens the start form.
	if _, err := fake.GlobalShortcut(wctx, "U1", blockkit.ShortcutStart); err != nil {
		t.Fatal(err)
	}
	if !fake.WaitUntil(10*time.Second, func() bool {
		for _, v := range fake.Views() {
			if strings.Contains(string(v.JSON), `"callback_id":"`+blockkit.CallbackStart+`"`) {
				return true
			}
		}
		return false
	}) {
		t.Error("the global shortcut did not open the start form")
	}
	// bot/assistant: the assistant panel greets the person who opens it.
	thread, err := fake.StartAssistantThread(wctx, "U1", "")
	if err != nil {
		t.Fatal(err)
	}
	if !fake.WaitUntil(10*time.Second, func() bool {
		for _, m := range fake.Thread(slackfake.DMChannelID("U1"), thread) {
			if strings.Contains(string(m.Blocks), "I research questions") {
				return true
			}
		}
		return false
	}) {
		t.Error("the assistant panel did not greet the person who opened it")
	}
}
