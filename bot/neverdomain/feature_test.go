package neverdomain_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/neverdomain"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const instID = "run-1.sources"

// reviewEngine is bottest's Engine whose NeverDomain takes the domain's
// sources out of the run and keeps it waiting at the source review, as the
// engine does.
type reviewEngine struct {
	*bottest.Engine
	mu    sync.Mutex
	calls []string
}

func (e *reviewEngine) NeverDomain(ctx context.Context, id, by, domain string) (*pipeline.Run, string, error) {
	e.mu.Lock()
	e.calls = append(e.calls, id+" "+by+" "+domain)
	e.mu.Unlock()
	r, err := e.Load(ctx, pipeline.RunIDOf(id))
	if err != nil {
		return nil, "", err
	}
	r.Domains.Never = append(r.Domains.Never, domain)
	for i := range r.Sources {
		if strings.Contains(r.Sources[i].URL, "://"+domain+"/") {
			r.Sources[i].FetchErr = pipeline.NeverDomainReason + " by " + by + " (never " + domain + ")"
		}
	}
	r.Checkpoints[0].Payload = payload(t0Sources(domain))
	e.Put(r)
	return r, domain, nil
}

func (e *reviewEngine) called() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.calls...)
}

// t0Sources are the source review's sources, without those of skip.
func t0Sources(skip string) []pipeline.SourceView {
	var out []pipeline.SourceView
	for _, s := range []pipeline.SourceView{{ID: 1, Title: "Ads", URL: "https://spam.example/a", Domain: "spam.example"},
		{ID: 2, Title: "Good", URL: "https://good.example/b", Domain: "good.example"}} {
		if s.Domain != skip {
			out = append(out, s)
		}
	}
	return out
}

func payload(sources []pipeline.SourceView) json.RawMessage {
	b, err := json.Marshal(pipeline.SourcesPayload{Question: "Heat pumps?", Sources: sources, Total: len(sources)})
	if err != nil {
		panic(err)
	}
	return b
}

// TestNeverUseASite: at a run's source review, someone who may not decide
// it changes nothing; the requester's "Never use spam.example" goes to the
// engine, the review is shown again without the site, the channel's never
// list keeps it, and the person is told what was taken out and saved.
func TestNeverUseASite(t *testing.T) {
	engine := &reviewEngine{Engine: bottest.NewEngine()}
	var defaults *redisstore.ChannelDefaults
	h := bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = engine
		defaults = redisstore.NewChannelDefaults(h.Redis, "rb:")
		c.Start.Defaults = defaults
		f, err := neverdomain.New(neverdomain.Config{Engine: engine, Defaults: defaults, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Features = append(c.Features, f)
	})
	inst := checkpoints.Instance{ID: instID, RunID: "run-1", DefinitionID: checkpoints.SourceReview, ControlType: checkpoints.SourceReview,
		Label: "Sources", State: checkpoints.StateOffered, Payload: payload(t0Sources(""))}
	engine.Put(&pipeline.Run{ID: "run-1", Question: "Heat pumps?", RequestedBy: bottest.Requester, Status: pipeline.StatusWaiting,
		Waiting: instID, Checkpoints: []checkpoints.Instance{inst}, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: bottest.Channel},
		Sources: []pipeline.Source{{ID: 1, URL: "https://spam.example/a"}, {ID: 2, URL: "https://good.example/b"}}})
	api := slack.New(h.Fake.BotToken(), slack.OptionAPIURL(h.Fake.APIURL()))
	_, ts, err := api.PostMessageContext(h.Ctx, bottest.Channel, slack.MsgOptionText("Sources", false), slack.MsgOptionBlocks(blockkit.RenderCheckpoint(&inst, bottest.Requester)...))
	if err != nil {
		t.Fatal(err)
	}
	review := func() slackfake.Message {
		for _, m := range h.Fake.Messages(bottest.Channel) {
			if m.TS == ts {
				return m
			}
		}
		t.Fatal("no source review")
		return slackfake.Message{}
	}
	if !strings.Contains(string(review().Blocks), `"Never use spam.example"`) {
		t.Fatalf("the source review offers no \"Never use spam.example\": %s", review().Blocks)
	}

	if _, err := h.Fake.SelectOption(h.Ctx, bottest.Stranger, bottest.Channel, ts, blockkit.ActionNeverDomain, "spam.example"); err != nil {
		t.Fatal(err)
	}
	h.EphemeralWith(bottest.Channel, bottest.Stranger, "Nothing was changed")
	if calls := engine.called(); len(calls) != 0 {
		t.Fatalf("another person's choice reached the engine: %q", calls)
	}

	if _, err := h.Fake.SelectOption(h.Ctx, bottest.Requester, bottest.Channel, ts, blockkit.ActionNeverDomain, "spam.example"); err != nil {
		t.Fatal(err)
	}
	answer := h.EphemeralWith(bottest.Channel, bottest.Requester, "Never using spam.example")
	if s := bottest.Raw(answer); !strings.Contains(s, "1 of this run's sources was taken out") || !strings.Contains(s, "Saved to this channel's never list") {
		t.Errorf("answer = %s", s)
	}
	h.Wait("the source review without the site", func() bool {
		b := string(review().Blocks)
		return !strings.Contains(b, `"Never use spam.example"`) && strings.Contains(b, `"Never use good.example"`)
	})
	if calls := engine.called(); len(calls) != 1 || calls[0] != instID+" "+bottest.Requester+" spam.example" {
		t.Errorf("engine calls %q", calls)
	}
	if f, err := defaults.Get(h.Ctx, bottest.Channel); err != nil || f["never_domains"] != "spam.example" {
		t.Errorf("the channel's defaults: %v, %v", f, err)
	}
}

// TestNewNamesWhatIsMissing: New refuses a Config without an engine or a
// way to reach Slack, and says which.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := neverdomain.New(neverdomain.Config{})
	if err == nil || !strings.Contains(err.Error(), "a Sender") || !strings.Contains(err.Error(), "an engine") {
		t.Errorf("New(empty) = %v", err)
	}
}
