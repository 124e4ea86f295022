package bot_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
	"github.com/researchbot/researchbot/bot/decisions"
)

// TestMain plugs the assistant panel and the checkpoints' buttons into
// package bot's own harness (it cannot import a feature: bot.PlugAssistant,
// bot.PlugDecisions), then checks that every goroutine the package starts
// (socket mode loop, workers, ack guards, progress timers, health server)
// has stopped when the tests end.
func TestMain(m *testing.M) {
	bot.PlugAssistant = plugAssistant
	bot.PlugDecisions = func(t testing.TB, c *bot.Config) {
		t.Helper()
		eng, ok := c.Engine.(decisions.Engine)
		if !ok {
			t.Fatalf("the engine %T cannot serve the checkpoints' buttons (decisions.Engine)", c.Engine)
		}
		plugDecisions(t, c, eng)
	}
	goleak.VerifyTestMain(m,
		// bleve's analysis workers (the document collection, linked in
		// through internal/app), started by its package init.
		goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}

// plugAssistant plugs bot/assistant into c as the assembly does
// (internal/app/roles): Assistant, over c's memory, streams and Sender
// (kitOf's).
func plugAssistant(t testing.TB, c *bot.Config) {
	t.Helper()
	panel, err := assistant.New(assistant.Config{Memory: c.Memory, Streams: c.Streams.Handler, Mentions: c.Streams.Mentions, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	c.Assistant = panel
}

// plugDecisions plugs the checkpoints' buttons and forms (bot/decisions)
// into c as the assembly does (internal/app/roles): a feature in
// Features over eng, telling c's App Home, if any, of decisions made in
// forms.
func plugDecisions(t testing.TB, c *bot.Config, eng decisions.Engine) {
	t.Helper()
	var home decisions.Home
	if h, ok := c.Home.(decisions.Home); ok {
		home = h
	}
	buttons, err := decisions.New(decisions.Config{Engine: eng, Home: home, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	c.Features = append(c.Features, buttons)
}
