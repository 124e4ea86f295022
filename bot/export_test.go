package bot

import (
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/slackfake"
)

// DisplayedText joins every displayed text (text objects' "text") of blocks
// given as JSON, for the tests of package bot_test.
func DisplayedText(blocksJSON []byte) string { return displayedText(blocksJSON) }

// WaitUntil is waitUntil, the tests' one way to wait, for package bot_test.
func WaitUntil(fake *slackfake.Server, limit time.Duration, cond func() bool) bool {
	return waitUntil(fake, limit, cond)
}

// RoutedEvents lists the Events API event types an App configured by cfg
// routes (its own and its features'), for package bot_test, which may plug
// in the features the assembly does.
func RoutedEvents(cfg Config) []string {
	a := &App{cfg: cfg, routes: NewRoutes()}
	a.registerRoutes()
	var out []string
	for typ := range a.routes.events {
		out = append(out, typ)
	}
	return out
}

// PlugAssistant plugs the assistant panel (bot/assistant) into the Config
// of the package's own end-to-end harness (newHarness), as the assembly
// does: package bot cannot import a feature, even in its tests, so package
// bot_test's TestMain sets it (main_test.go) before any test runs.
var PlugAssistant func(t testing.TB, c *Config)

// PlugDecisions plugs the checkpoints' buttons and forms (bot/decisions)
// into the Config of the package's own end-to-end harness, as the
// assembly does (Features): set by package bot_test's TestMain for the
// reason PlugAssistant is.
var PlugDecisions func(t testing.TB, c *Config)
