package bot

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestKitNamesAMissingSenderAndFillsTheRest: a feature cannot do without
// the App's Sender, and takes defaults for the rest; its logger shortens
// the long values people type.
func TestKitNamesAMissingSenderAndFillsTheRest(t *testing.T) {
	if m := (Kit{}).Missing(); len(m) != 1 || !strings.Contains(m[0], "Sender") {
		t.Errorf("Missing() of an empty Kit = %q", m)
	}
	k := Kit{Sender: NewSender(SenderConfig{BotToken: "xoxb-1"})}
	if m := k.Missing(); m != nil {
		t.Errorf("Missing() with a Sender = %q", m)
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
