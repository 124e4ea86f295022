package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestRealEngineFullModeThroughSlack drives the real engine (Redis store,
// queue and worker, the scripted model and fake web) from the real
// socketmode client against the fake Slack: /research in full mode, every
// checkpoint approved by clicking its button, the report in the thread with
// the hostile page text escaped, and the Markdown file uploaded.
func TestRealEngineFullModeThroughSlack(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	fake, _, ctx, _ := startRealStack(t, &researchtest.Researcher{QuoteUntrusted: true, CriticalOnReview: map[int]bool{1: true}}, nil)
	const user, channel = "U0REQ0001", "C0RESEARCH"
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()

	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode full How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for len(fake.Files()) == 0 {
		var m slackfake.Message
		var label string
		next := func() bool {
			var ok bool
			m, label, ok = pendingCheckpoint(fake, channel)
			return len(fake.Files()) > 0 || (ok && !seen[m.TS])
		}
		if !bot.WaitUntil(fake, time.Until(deadline), next) {
			t.Fatalf("no report; decided %v; messages:\n%s", seen, dumpAll(fake, channel))
		}
		if len(fake.Files()) > 0 {
			break
		}
		seen[m.TS] = true
		t.Logf("approving %q", label)
		if strings.Contains(label, "Critical issues") && !strings.Contains(string(m.Blocks), `"Publish as it is"`) {
			t.Errorf("the critical issues do not offer to publish as it is: %s", m.Blocks)
		}
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := fake.ClickButton(cctx, user, channel, m.TS, blockkit.ActionApprove, "", "")
		ccancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Approve at the critical issues is "Publish as it is": the draft is
	// published without another review.
	if len(seen) != 3 {
		t.Errorf("approved %d checkpoints, want plan, sources and critical issues", len(seen))
	}
	var report string
	bot.WaitUntil(fake, 10*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if s := displayed(m); strings.Contains(s, "full report is attached") {
				report = s
			}
		}
		return report != ""
	})
	if report == "" {
		t.Fatalf("no report summary:\n%s", dumpAll(fake, channel))
	}
	// The file is uploaded in two calls; the test looks once the second
	// (files.completeUploadExternal) has been made.
	bot.WaitUntil(fake, 10*time.Second, func() bool { return len(fake.Files()) > 0 && fake.Files()[0].Completed })
	if fs := fake.Files(); len(fs) == 0 || !fs[0].Completed || !strings.HasSuffix(fs[0].Name, ".md") || len(fs[0].Content) == 0 {
		t.Errorf("report files %+v", fs)
	}
	for _, bad := range []string{"<!channel>", "<http://evil.example|"} {
		if strings.Contains(report, bad) {
			t.Errorf("report summary contains %q unescaped:\n%s", bad, report)
		}
	}
	if !strings.Contains(report, "&lt;!channel&gt; see &lt;") {
		t.Errorf("the hostile page text is not in the summary, escaped:\n%s", report)
	}
	for _, m := range fake.Messages(channel) {
		if s := displayed(m); strings.Contains(s, "<!channel>") || strings.Contains(s, "<http://evil.example|") {
			t.Errorf("a bot message smuggles a mention or masked link: %s", s)
		}
	}
	for _, ack := range fake.Acks() {
		if ack.Latency >= 3*time.Second {
			t.Errorf("ack after %s", ack.Latency)
		}
	}
}

// engineConfig is the configuration of a real engine on the Redis at
// redisURL, the scripted model at modelURL and the fake web at webURL.
func engineConfig(t *testing.T, redisURL, modelURL, webURL string) config.Config {
	t.Helper()
	vars := map[string]string{
		"OPENAI_API_KEY": "sk-test-secret", "OPENAI_BASE_URL": modelURL, "SEARXNG_URL": webURL,
		"FETCH_ALLOW_PRIVATE_NETWORKS": "true", "REDIS_URL": redisURL, "LLM_MAX_RETRIES": "2", "WORKER_CONCURRENCY": "2",
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startEngine starts the real engine with the bot's presenter (on the fake
// Slack, remembering in mem) and the built-in checkpoint definitions; runs
// go to queue. Both stop when the test ends.
func startEngine(t *testing.T, ctx context.Context, cfg config.Config, fake *slackfake.Server, mem bot.SlackMemory, metrics *bot.Metrics, queue string) (*app.App, *bot.Presenter) {
	t.Helper()
	pres, err := bot.NewPresenter(bot.PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: mem, Metrics: metrics, MinInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pres.Close)
	a, err := app.New(ctx, cfg, app.Options{Presenters: map[string]pipeline.Presenter{bot.OriginKind: pres}, Observer: metrics, DefaultQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	if err := a.Engine.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	return a, pres
}

// startRealStack starts the real engine (Redis store, queue and one
// worker, the scripted model res and the fake web) and the bot on the fake
// Slack, with channel C0RESEARCH and user U0REQ0001 known; edit adjusts the
// bot's Config. Everything stops when the test ends.
func startRealStack(t *testing.T, res *researchtest.Researcher, edit func(*bot.Config, *app.App)) (*slackfake.Server, *app.App, context.Context, context.CancelFunc) {
	t.Helper()
	return startRealStackOn(t, res, researchtest.NewWeb(t, researchtest.DefaultPages()...), edit)
}

// startRealStackOn is startRealStack on the fake web the test made.
func startRealStackOn(t *testing.T, res *researchtest.Researcher, web *researchtest.Web, edit func(*bot.Config, *app.App)) (*slackfake.Server, *app.App, context.Context, context.CancelFunc) {
	t.Helper()
	srv, _ := redistest.Start(t)
	model := llmtest.NewServer(t, res.Respond)
	cfg := engineConfig(t, srv.URL, model.URL(), web.URL())
	fake := slackfake.New(t)
	fake.AddChannel("C0RESEARCH", "research", true)
	fake.AddUser("U0REQ0001", "ada", "UTC")

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	metrics := bot.NewMetrics()
	// The presenter needs Redis before the engine exists; connect once for it.
	a0, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a0.Close() })
	a, _ := startEngine(t, ctx, cfg, fake, redisstore.NewSlackMemory(a0.Conn.Client), metrics, "slack")
	stopWorker, err := a.StartWorker([]string{"slack"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopWorker)
	bc := bot.Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Engine: a.Engine, Memory: redisstore.NewSlackMemory(a.Conn.Client), Budget: redisstore.NewRateLimiter(a.Conn.Client, "slack"), Metrics: metrics}
	plugConversation(t, &bc, a.Engine, bot.Limit{}, bot.Limit{})
	bc.Home = appHome(t, &bc, a, nil) // as the assembly plugs it in
	if edit != nil {
		edit(&bc, a)
	}
	plugAssistant(t, &bc)           // over the streams an edit plugged in, as the assembly does
	plugDecisions(t, &bc, a.Engine) // telling the Home an edit plugged in
	runBot(t, ctx, cancel, fake, bc)
	return fake, a, ctx, cancel
}

// pendingCheckpoint finds a message with an Approve button.
func pendingCheckpoint(fake *slackfake.Server, channel string) (slackfake.Message, string, bool) {
	for _, m := range fake.Messages(channel) {
		if m.Ephemeral || !strings.Contains(string(m.Blocks), `"`+blockkit.ActionApprove+`"`) {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		}
		_ = json.Unmarshal(m.Blocks, &blocks)
		label := ""
		if len(blocks) > 0 {
			label = blocks[0].Text.Text
		}
		return m, label, true
	}
	return slackfake.Message{}, "", false
}

// displayed is every text object's text in a message.
func displayed(m slackfake.Message) string { return bot.DisplayedText(m.Blocks) }

func dumpAll(fake *slackfake.Server, channel string) string {
	var b strings.Builder
	for _, m := range fake.Messages(channel) {
		b.WriteString(m.TS + " " + m.ThreadTS + " " + m.Text + "\n")
	}
	return b.String()
}

// runBot starts the bot until the test ends (cancel stops it) and waits
// until it is connected to the fake Slack.
func runBot(t *testing.T, ctx context.Context, cancel context.CancelFunc, fake *slackfake.Server, cfg bot.Config) {
	t.Helper()
	b, err := bot.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }() // owner: this test; stopped by cancel at cleanup
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := fake.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
}

// realBot is startRealStack with one more user and channel known.
func realBot(t *testing.T, res *researchtest.Researcher, user, channel string) (*slackfake.Server, *app.App, context.Context) {
	t.Helper()
	fake, a, ctx, _ := startRealStack(t, res, nil)
	fake.AddChannel(channel, "research", true)
	fake.AddUser(user, "ada", "UTC")
	return fake, a, ctx
}

// kitOf is what the features plugged into the App c configures take from
// its transport, as the assembly hands it: c's Sender (made here as the App
// would make its own, on c's clock, when c has none, and given to the App
// too, so they share it), metrics, logger and clock.
func kitOf(c *bot.Config) bot.Kit {
	if c.Sender == nil {
		c.Sender = bot.NewSender(bot.SenderConfig{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: c.APIURL, HTTPClient: c.HTTPClient, Metrics: c.Metrics, Logger: c.Logger, Clock: c.Clock})
	}
	return bot.Kit{Sender: c.Sender, Metrics: c.Metrics, Logger: c.Logger, Clock: c.Clock}
}
