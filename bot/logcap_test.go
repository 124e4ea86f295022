package bot

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestLogsCapAttackerSizedValues(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(CapLogs(slog.NewJSONHandler(&buf, nil)))
	value := strings.Repeat("V", 2048)
	log.With("checkpoint_id", value).Info("bot: click refused",
		"action", "é"+strings.Repeat("é", 300), // cut on a rune boundary
		"err", errors.New(strings.Repeat("E", 1000)),
		slog.Group("view", "private_metadata", value),
		"short", "kept", "n", 7)
	out := buf.String()
	for _, long := range []string{strings.Repeat("V", maxLogValue+1), strings.Repeat("E", maxLogValue+1)} {
		if strings.Contains(out, long) {
			t.Fatalf("a value was logged beyond %d bytes: %s", maxLogValue, out)
		}
	}
	for _, want := range []string{`"checkpoint_id":"VVVV`, "… (2048 bytes)", "… (1000 bytes)", "… (602 bytes)", `"private_metadata":"VVV`, `"short":"kept"`, `"n":7`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
	if strings.Contains(out, "\\ufffd") {
		t.Errorf("a rune was cut in half: %s", out)
	}
	if CapLogs(CapLogs(slog.DiscardHandler)) != CapLogs(slog.DiscardHandler) {
		t.Error("CapLogs wraps twice")
	}
}
