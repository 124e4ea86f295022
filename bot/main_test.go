package bot_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
)

// TestMain plugs the assistant panel into package bot's own harness (it
// cannot import the feature: bot.PlugAssistant), then checks that every
// goroutine the package starts (socket mode loop, workers, ack guards,
// progress timers, health server) has stopped when the tests end.
func TestMain(m *testing.M) {
	bot.PlugAssistant = plugAssistant
	goleak.VerifyTestMain(m,
		// bleve's analysis workers (the document collection, linked in
		// through internal/app), started by its package init.
		goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

// plugAssistant plugs bot/assistant into c as the assembly does
// (internal/app/roles): Assistant, over c's memory, streams and Sender
// (made here as the App would make its own, on c's clock, and shared with
// the App, when c has none yet).
func plugAssistant(t testing.TB, c *bot.Config) {
	t.Helper()
	if c.Sender == nil {
		c.Sender = bot.NewSender(bot.SenderConfig{BotToken: c.BotToken, AppToken: c.AppToken, APIURL: c.APIURL, HTTPClient: c.HTTPClient, Metrics: c.Metrics, Logger: c.Logger, Clock: c.Clock})
	}
	panel, err := assistant.New(assistant.Config{Memory: c.Memory, Streams: c.Streams.Handler, Mentions: c.Streams.Mentions, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	c.Assistant = panel
}
