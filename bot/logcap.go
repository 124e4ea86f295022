package bot

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"
)

// maxLogValue is the most bytes of one string logged by the bot. Much of
// what the bot logs comes from Slack payloads, which anyone who can click or
// type can fill (a 2 KB button value, a 100 KB question); past this bound a
// value is logged as its prefix and its length.
const maxLogValue = 256

// capHandler is a slog.Handler that bounds every string and error it passes
// on (attributes, groups and the message) to maxLogValue bytes.
type capHandler struct{ next slog.Handler }

// CapLogs wraps h so no attacker-sized value reaches the log: every string
// and error is bounded (maxLogValue). The App and the Sender log through it,
// and so does a feature logging what people typed or clicked.
func CapLogs(h slog.Handler) slog.Handler {
	if c, ok := h.(capHandler); ok {
		return c
	}
	return capHandler{next: h}
}

// Enabled implements slog.Handler.
func (c capHandler) Enabled(ctx context.Context, l slog.Level) bool { return c.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (c capHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, capString(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(capAttr(a))
		return true
	})
	return c.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (c capHandler) WithAttrs(as []slog.Attr) slog.Handler {
	capped := make([]slog.Attr, len(as))
	for i, a := range as {
		capped[i] = capAttr(a)
	}
	return capHandler{next: c.next.WithAttrs(capped)}
}

// WithGroup implements slog.Handler.
func (c capHandler) WithGroup(name string) slog.Handler {
	return capHandler{next: c.next.WithGroup(name)}
}

// capAttr bounds a's value: strings and errors are cut, groups are walked.
func capAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if len(v.String()) > maxLogValue {
			return slog.String(a.Key, capString(v.String()))
		}
	case slog.KindGroup:
		group := v.Group()
		capped := make([]any, len(group))
		for i, g := range group {
			capped[i] = capAttr(g)
		}
		return slog.Group(a.Key, capped...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && len(err.Error()) > maxLogValue {
			return slog.String(a.Key, capString(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// capString returns s, or its first maxLogValue bytes (cut at a rune
// boundary) followed by how long it was.
func capString(s string) string {
	if len(s) <= maxLogValue {
		return s
	}
	cut := maxLogValue
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
