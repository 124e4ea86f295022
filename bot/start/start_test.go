package start_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/start"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const user, channel = bottest.Requester, bottest.Channel

// defaults is an in-memory bot.ChannelDefaults.
type defaults struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func (d *defaults) Get(_ context.Context, ch string) (map[string]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]string{}
	for k, v := range d.m[ch] {
		out[k] = v
	}
	return out, nil
}

func (d *defaults) Put(_ context.Context, ch string, f map[string]string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[ch] = f
	return nil
}

// fixture is the App with the start form plugged in as the assembly plugs
// it: the same store of defaults for the form and for bot's never list.
type fixture struct {
	*bottest.Harness
	t        *testing.T
	engine   *bottest.Engine
	defaults *defaults
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, engine: bottest.NewEngine(), defaults: &defaults{m: map[string]map[string]string{}}}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		c.Start.Defaults = f.defaults
		form, err := start.New(start.Config{Defaults: f.defaults, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Features = append(c.Features, form)
	})
	return f
}

// view waits for the n-th view the App opened and returns it.
func (f *fixture) view(n int) slackfake.View {
	f.t.Helper()
	f.Wait("a form", func() bool { return len(f.Fake.Views()) >= n })
	return f.Fake.Views()[n-1]
}

// run waits for the run asking question and returns it.
func (f *fixture) run(question string) *pipeline.Run {
	f.t.Helper()
	var found *pipeline.Run
	f.Wait("the run of "+question, func() bool {
		for _, r := range f.engine.Runs() {
			if r.Question == question && !r.Held {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// TestSlashOpensTheFormWithTheChannelsDefaults: "/research" without text
// opens the form with what the channel remembers; a form with problems is
// answered in the form; a valid one starts the run in the channel and is
// remembered as the channel's defaults.
func TestSlashOpensTheFormWithTheChannelsDefaults(t *testing.T) {
	f := newFixture(t)
	f.defaults.m[channel] = map[string]string{"depth": "comprehensive", "budget_usd": "2.5"}
	f.Slash(user, channel, "")
	v := f.view(1)
	js := string(v.JSON)
	for _, want := range []string{`"callback_id":"start_research"`, `"initial_value":"2.5"`, `"text":"Comprehensive`} {
		if !strings.Contains(js, want) {
			t.Errorf("the form lacks %s: %s", want, js)
		}
	}
	if strings.Contains(js, `"start_channel"`) {
		t.Errorf("a form opened from a channel asks for the channel: %s", js)
	}
	if bad := f.Submit(user, v, bottest.Form(map[string]slack.BlockAction{"start_question": {Value: "why?"}, "start_budget": {Value: "lots"}})); bad.ResponseAction != "errors" || bad.Errors["start_budget"] == "" {
		t.Fatalf("an invalid form was acked %+v", bad)
	}
	const q = "How well do heat pumps work in cold climates?"
	if ok := f.Submit(user, v, bottest.Form(map[string]slack.BlockAction{"start_question": {Value: q}, "start_depth": bottest.Selected("quick"), "start_never_domains": {Value: "spam.example"}})); ok.ResponseAction != "" {
		t.Fatalf("a valid form was acked %+v", ok)
	}
	r := f.run(q)
	if r.Origin.Channel != channel || r.Depth != pipeline.DepthQuick || r.RequestedBy != user {
		t.Errorf("run %s: channel %s depth %s by %s", r.ID, r.Origin.Channel, r.Depth, r.RequestedBy)
	}
	d, _ := f.defaults.Get(f.Ctx, channel)
	if d["depth"] != "quick" || d["never_domains"] != "spam.example" {
		t.Errorf("the channel's defaults are %v", d)
	}
}

// TestShortcutsOpenTheForm: the global shortcut opens a form that asks for
// the channel; the message shortcut opens one with the message as the
// question, whose run goes in the message's thread.
func TestShortcutsOpenTheForm(t *testing.T) {
	f := newFixture(t)
	if _, err := f.Fake.GlobalShortcut(f.Ctx, user, blockkit.ShortcutStart); err != nil {
		t.Fatal(err)
	}
	if v := f.view(1); !strings.Contains(string(v.JSON), `"start_channel"`) {
		t.Fatalf("the global shortcut's form has no channel picker: %s", v.JSON)
	}

	f.Message(user, channel, "", "Is district heating cheaper than heat pumps?")
	var msgTS string
	f.Wait("the person's message", func() bool {
		for _, m := range f.Fake.Messages(channel) {
			if m.User == user {
				msgTS = m.TS
			}
		}
		return msgTS != ""
	})
	if _, err := f.Fake.MessageShortcut(f.Ctx, user, channel, msgTS, blockkit.ShortcutResearchThis); err != nil {
		t.Fatal(err)
	}
	v := f.view(2)
	if !strings.Contains(string(v.JSON), `"initial_value":"Is district heating cheaper than heat pumps?"`) || strings.Contains(string(v.JSON), `"start_channel"`) {
		t.Fatalf("the message shortcut's form is not pre-filled with the message: %s", v.JSON)
	}
	const q = "Is district heating cheaper than heat pumps?"
	f.Submit(user, v, bottest.Form(map[string]slack.BlockAction{"start_question": {Value: q}}))
	if r := f.run(q); r.Origin.Channel != channel || r.Origin.ThreadTS != msgTS {
		t.Errorf("the run is in %s/%s, want the message's thread %s", r.Origin.Channel, r.Origin.ThreadTS, msgTS)
	}
}

// TestNewNeedsTheSender: without the App's Sender there is no feature.
func TestNewNeedsTheSender(t *testing.T) {
	if _, err := start.New(start.Config{}); err == nil || !strings.Contains(err.Error(), "Sender") {
		t.Errorf("New without a Sender: %v", err)
	}
}
