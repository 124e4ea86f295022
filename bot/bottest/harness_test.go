package bottest

import (
	"context"
	"errors"
	"testing"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// clickFeature answers clicks on its button with a message for the clicker.
type clickFeature struct{ clicks chan string }

func (f clickFeature) Register(r *bot.Routes) {
	r.Action("bottest_click", func(_ context.Context, req *bot.Request) error {
		f.clicks <- req.Action.Value
		return bot.Tell([]slack.Block{blockkit.Section("clicked " + req.Action.Value)}, "Clicked")
	})
}

// TestHarnessRoutesAFeaturesClick: a feature plugged in by setup gets the
// click on its button, and what it answers reaches the clicker alone.
func TestHarnessRoutesAFeaturesClick(t *testing.T) {
	f := clickFeature{clicks: make(chan string, 1)}
	h := New(t, func(_ *Harness, c *bot.Config) { c.Features = append(c.Features, f) })
	api := slack.New(h.Fake.BotToken(), slack.OptionAPIURL(h.Fake.APIURL()))
	_, ts, err := api.PostMessageContext(h.Ctx, Channel, slack.MsgOptionText("a button", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("b", slack.NewButtonBlockElement("bottest_click", "v1", blockkit.Plain("Click", 75)))))
	if err != nil {
		t.Fatal(err)
	}
	var m slackfake.Message
	h.Wait("the button", func() bool {
		for _, x := range h.Fake.Messages(Channel) {
			if x.TS == ts {
				m = x
			}
		}
		return m.TS != ""
	})
	if v := ButtonValue(m, "bottest_click"); v != "v1" {
		t.Fatalf("ButtonValue = %q", v)
	}
	h.Click(Stranger, m, "bottest_click")
	if got := <-f.clicks; got != "v1" {
		t.Errorf("the feature got %q", got)
	}
	if e := h.EphemeralWith(Channel, Stranger, "clicked v1"); e.ToUser != Stranger {
		t.Errorf("answered to %q", e.ToUser)
	}
}

// TestEngineKeepsOneVerdictPerPerson: a second verdict of the same person
// on the same thing replaces the first; a run without a report has none.
func TestEngineKeepsOneVerdictPerPerson(t *testing.T) {
	e := NewEngine()
	ctx := context.Background()
	e.Put(&pipeline.Run{ID: "r1", Report: &pipeline.Report{}})
	e.Put(&pipeline.Run{ID: "r2"})
	for _, v := range []pipeline.Verdict{{By: "a", Useful: true}, {By: "a", Useful: false}, {By: "a", On: "f1", Useful: true}} {
		if _, err := e.RecordVerdict(ctx, "r1", v); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.Load(ctx, "r1")
	if err != nil || len(r.Verdicts) != 2 || r.Verdicts[0].Useful || r.Verdicts[1].On != "f1" {
		t.Errorf("verdicts %+v, %v", r, err)
	}
	if _, err := e.RecordVerdict(ctx, "r2", pipeline.Verdict{By: "a"}); !errors.Is(err, pipeline.ErrNoReport) {
		t.Errorf("a run without a report: %v", err)
	}
	if _, err := e.RecordVerdict(ctx, "r3", pipeline.Verdict{By: "a"}); !errors.Is(err, pipeline.ErrNotFound) {
		t.Errorf("no run: %v", err)
	}
}
