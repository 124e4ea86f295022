package pipeline

import "log/slog"

// PersonToken is a short-lived permission of the person who started a run
// to search what they can read on their behalf (Slack's action_token for
// workspace search). It is kept with the run only while the run works (the
// Engine clears it when the run ends), never logged nor printed: its
// String, GoString and LogValue are "[redacted]".
type PersonToken string

const redacted = "[redacted]"

// String implements fmt.Stringer without the token.
func (t PersonToken) String() string {
	if t == "" {
		return ""
	}
	return redacted
}

// GoString implements fmt.GoStringer without the token.
func (t PersonToken) GoString() string { return t.String() }

// LogValue implements slog.LogValuer without the token.
func (t PersonToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// Reveal is the token itself, for the one call that sends it.
func (t PersonToken) Reveal() string { return string(t) }
