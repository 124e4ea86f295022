package bot

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestKitNamesAMissingSenderAndFillsTheRest: a feature cannot do without
// the App's Sender or the ports it requires, and is told all it lacks at
// once; it takes defaults for the rest; its logger shortens the long
// values people type.
func TestKitNamesAMissingSenderAndFillsTheRest(t *testing.T) {
	var engine any
	needs := []Need{{Name: "an engine", Present: engine != nil}, {Name: "a memory", Present: true}}
	err := (Kit{}).Require("bot: sharing needs", needs...)
	if want := "bot: sharing needs a Sender (the Web API client the App shares), an engine"; err == nil || err.Error() != want {
		t.Errorf("Require of an empty Kit = %v, want %q", err, want)
	}
	k := Kit{Sender: NewSender(SenderConfig{BotToken: "xoxb-1"})}
	if err := k.Require("bot: sharing needs", needs...); err == nil || err.Error() != "bot: sharing needs an engine" {
		t.Errorf("Require with a Sender and no engine = %v", err)
	}
	if err := k.Require("bot: sharing needs", Need{Name: "an engine", Present: true}); err != nil {
		t.Errorf("Require with all it needs = %v", err)
	}
	d := k.WithDefaults()
	if d.Sender != k.Sender || d.Metrics == nil || d.Logger == nil || d.Clock == nil {
		t.Errorf("WithDefaults() = %+v", d)
	}
	var logs lockedBuffer
	k.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	k.WithDefaults().Logger.InfoContext(context.Background(), "typed", "text", strings.Repeat("x", 10_000))
	if n := len(logs.String()); n == 0 || n > 2_000 {
		t.Errorf("a 10,000-byte value logged as %d bytes", n)
	}
}
