package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/neverdomain"
	"github.com/researchbot/researchbot/bot/start"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// startFixture is a real engine and bot with channel defaults in Redis.
type startFixture struct {
	t    *testing.T
	ctx  context.Context
	fake *slackfake.Server
	app  *app.App
}

const (
	startUser    = "U0REQ0001"
	startChannel = "C0RESEARCH"
)

func newStartFixture(t *testing.T) *startFixture {
	if testing.Short() {
		t.Skip("the real engine")
	}
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, a *app.App) {
		c.Start.Defaults = redisstore.NewChannelDefaults(a.Conn.Client, "rb:")
		// "Never use a site…" is plugged in as the assembly plugs it.
		never, err := neverdomain.New(neverdomain.Config{Engine: a.Engine, Defaults: c.Start.Defaults, Kit: kitOf(c)})
		if err != nil {
			t.Fatal(err)
		}
		// The start form is plugged in as the assembly plugs it, with the
		// same store of channel defaults.
		c.Features = append(c.Features, never)
		plugStart(t, c)
	})
	return &startFixture{t: t, ctx: ctx, fake: fake, app: a}
}

// plugStart plugs the start form (bot/start) into c as the assembly does,
// with c's store of channel defaults.
func plugStart(t *testing.T, c *bot.Config) {
	t.Helper()
	form, err := start.New(start.Config{Defaults: c.Start.Defaults, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	c.Features = append(c.Features, form)
}

// waitFor waits for cond (the fake Slack and the engine work on their own
// goroutines) until it holds or 20 s pass.
func (f *startFixture) waitFor(what string, cond func() bool) {
	f.t.Helper()
	if !bot.WaitUntil(f.fake, 20*time.Second, cond) {
		f.t.Fatalf("timed out waiting for %s; messages:\n%s", what, dumpAll(f.fake, startChannel))
	}
}

// lastView waits for the n-th view the bot opened and returns it.
func (f *startFixture) view(n int) slackfake.View {
	f.t.Helper()
	f.waitFor("a form", func() bool { return len(f.fake.Views()) >= n })
	return f.fake.Views()[n-1]
}

// submit submits the start form v with values and returns the ack.
func (f *startFixture) submit(v slackfake.View, values map[string]map[string]slack.BlockAction) slackfake.ViewSubmissionAck {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	ack, err := f.fake.SubmitView(ctx, startUser, v.SlackView(), values)
	if err != nil {
		f.t.Fatal(err)
	}
	va, err := ack.ViewSubmission()
	if err != nil {
		f.t.Fatal(err)
	}
	return va
}

// run waits for the run asking question and returns it.
func (f *startFixture) run(question string) *pipeline.Run {
	f.t.Helper()
	var found *pipeline.Run
	f.waitFor("the run of "+question, func() bool {
		runs, _ := f.app.Engine.List(f.ctx, pipeline.RunFilter{RequestedBy: startUser, Limit: 20})
		for _, r := range runs {
			if r.Question == question && !r.Held { // held: its root message is being posted
				found = r
				return true
			}
		}
		return false
	})
	return found
}

func TestE2EStartFormDefaultsAndValidation(t *testing.T) {
	f := newStartFixture(t)
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	if _, err := f.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", UserID: startUser, ChannelID: startChannel}); err != nil {
		t.Fatal(err)
	}
	v := f.view(1)
	js := string(v.JSON)
	for _, want := range []string{`"callback_id":"start_research"`, `"value":"guided"`, `"value":"standard"`} {
		if !strings.Contains(js, want) {
			t.Errorf("the form lacks %s: %s", want, js)
		}
	}
	if strings.Contains(js, `"start_channel"`) {
		t.Errorf("a form opened from a channel asks for the channel: %s", js)
	}

	bad := f.submit(v, bottest.Form(map[string]slack.BlockAction{
		"start_question":      {Value: "why?"},
		"start_mode":          bottest.Selected("auto"),
		"start_sources":       {SelectedOptions: []slack.OptionBlockObject{{Value: "review_sources"}}},
		"start_budget":        {Value: "lots"},
		"start_never_domains": {Value: "spam.example, not_a_domain"},
	}))
	if bad.ResponseAction != "errors" || bad.Errors["start_question"] == "" || bad.Errors["start_budget"] == "" || bad.Errors["start_sources"] == "" ||
		!strings.Contains(bad.Errors["start_never_domains"], `"not_a_domain"`) {
		t.Fatalf("an invalid form was acked %+v", bad)
	}
	const q = "How well do heat pumps work in cold climates?"
	ok := f.submit(v, bottest.Form(map[string]slack.BlockAction{
		"start_question":      {Value: q},
		"start_mode":          bottest.Selected("guided"),
		"start_depth":         bottest.Selected("quick"),
		"start_sources":       {SelectedOptions: []slack.OptionBlockObject{{Value: "review_sources"}}},
		"start_budget":        {Value: "$1.5"},
		"start_only_domains":  {Value: "Example.org"},
		"start_never_domains": {Value: "spam.example"},
	}))
	if ok.ResponseAction != "" {
		t.Fatalf("a valid form was acked %+v", ok)
	}
	r := f.run(q)
	if r.Mode != "full" || r.Depth != pipeline.DepthQuick || r.Limits.MaxCostUSD != 1.5 || r.Origin.Channel != startChannel {
		t.Errorf("run %s: mode %s depth %s budget %v channel %s", r.ID, r.Mode, r.Depth, r.Limits.MaxCostUSD, r.Origin.Channel)
	}
	if got := r.Domains.String(); got != "only example.org · never spam.example" {
		t.Errorf("run %s: domain rules %q", r.ID, got)
	}
	f.waitFor("the root message naming the run", func() bool {
		for _, m := range f.fake.Messages(startChannel) {
			if m.ThreadTS == "" && strings.Contains(string(m.Blocks), r.ID) && m.TS == r.Origin.ThreadTS {
				return true
			}
		}
		return false
	})

	// The channel's defaults are now what was used, once remembered (after
	// the run started).
	defaults := redisstore.NewChannelDefaults(f.app.Conn.Client, "rb:")
	f.waitFor("the channel's defaults remembered", func() bool {
		d, err := defaults.Get(ctx, startChannel)
		return err == nil && d["depth"] == "quick"
	})
	if _, err := f.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", UserID: startUser, ChannelID: startChannel}); err != nil {
		t.Fatal(err)
	}
	js = string(f.view(2).JSON)
	for _, want := range []string{`"initial_value":"1.5"`, `"initial_option":{"text":{"emoji":true,"text":"Quick`, `"initial_options":[{"text":{"emoji":true,"text":"Let me review`, `"initial_value":"example.org"`, `"initial_value":"spam.example"`} {
		if !strings.Contains(js, want) {
			t.Errorf("the second form lacks the channel's defaults %s: %s", want, js)
		}
	}
}

func TestE2EShortcutsOpenTheStartForm(t *testing.T) {
	f := newStartFixture(t)
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()

	// Global shortcut: the form asks for the channel.
	if _, err := f.fake.GlobalShortcut(ctx, startUser, blockkit.ShortcutStart); err != nil {
		t.Fatal(err)
	}
	v := f.view(1)
	if !strings.Contains(string(v.JSON), `"start_channel"`) || !strings.Contains(string(v.JSON), `"conversations_select"`) {
		t.Fatalf("the global shortcut's form has no channel picker: %s", v.JSON)
	}
	const q1 = "What limits battery storage in cold climates?"
	if a := f.submit(v, bottest.Form(map[string]slack.BlockAction{"start_question": {Value: q1}})); a.Errors["start_channel"] == "" {
		t.Errorf("a form without a channel was acked %+v", a)
	}
	f.submit(v, bottest.Form(map[string]slack.BlockAction{"start_question": {Value: q1}, "start_channel": {SelectedConversation: startChannel}}))
	if r := f.run(q1); r.Origin.Channel != startChannel || r.Mode != "guided" || r.Depth != pipeline.DepthStandard {
		t.Errorf("global shortcut run: %+v", r.Origin)
	}

	// Message shortcut: the question is the message, the run is in its thread.
	if err := f.fake.PostUserMessage(ctx, startUser, startChannel, "", "Is &lt;b&gt;district heating&lt;/b&gt; cheaper than heat pumps?"); err != nil {
		t.Fatal(err)
	}
	var msgTS string
	for _, m := range f.fake.Messages(startChannel) {
		if m.User == startUser {
			msgTS = m.TS
		}
	}
	if _, err := f.fake.MessageShortcut(ctx, startUser, startChannel, msgTS, blockkit.ShortcutResearchThis); err != nil {
		t.Fatal(err)
	}
	v = f.view(2)
	if !strings.Contains(string(v.JSON), `"initial_value":"Is \u003cb\u003edistrict heating\u003c/b\u003e cheaper than heat pumps?"`) || strings.Contains(string(v.JSON), `"start_channel"`) {
		t.Fatalf("the message shortcut's form is not pre-filled with the message: %s", v.JSON)
	}
	const q2 = "Is <b>district heating</b> cheaper than heat pumps?"
	f.submit(v, bottest.Form(map[string]slack.BlockAction{"start_question": {Value: q2}}))
	r := f.run(q2)
	if r.Origin.ThreadTS != msgTS {
		t.Errorf("the run's thread is %q, want the message's %q", r.Origin.ThreadTS, msgTS)
	}
	f.waitFor("the root message in the message's thread", func() bool {
		for _, m := range f.fake.Thread(startChannel, msgTS) {
			if m.BotID != "" && strings.Contains(string(m.Blocks), r.ID) {
				return true
			}
		}
		return false
	})

	// A question that starts with a subcommand word is researched.
	const q3 = "stream processing frameworks compared"
	if _, err := f.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: q3, UserID: startUser, ChannelID: startChannel}); err != nil {
		t.Fatal(err)
	}
	f.run(q3)
}
