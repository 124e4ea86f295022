package bot

import (
	"log/slog"

	"github.com/coder/quartz"
)

// Kit is what every feature takes from the transport, built once by the
// assembly (internal/app/roles) and handed to each feature's New: the one
// Web API client, the App's counters, the logger and the clock. A feature's
// Config embeds it beside the ports the feature declares.
type Kit struct {
	// Sender is the Web API client the App and every feature share
	// (required): one client, one retry policy, one rate-limit budget.
	Sender *Sender
	// Metrics are the App's counters, so what a feature counts is served on
	// the App's /metrics; nil means new ones (a test's).
	Metrics *Metrics
	// Logger receives the feature's logs; nil discards them.
	Logger *slog.Logger
	// Clock is the process's one clock; nil means the real clock.
	Clock quartz.Clock
}

// Missing names what k lacks that a feature cannot do without, for the
// feature's New to report with its own missing ports.
func (k Kit) Missing() []string {
	if k.Sender == nil {
		return []string{"a Sender (the Web API client the App shares)"}
	}
	return nil
}

// WithDefaults returns k with nil Metrics, Logger and Clock filled in. Its
// Logger shortens long values (CapLogs): features log what people typed.
func (k Kit) WithDefaults() Kit {
	if k.Metrics == nil {
		k.Metrics = NewMetrics()
	}
	if k.Logger == nil {
		k.Logger = slog.New(slog.DiscardHandler)
	}
	k.Logger = slog.New(CapLogs(k.Logger.Handler()))
	if k.Clock == nil {
		k.Clock = quartz.NewReal()
	}
	return k
}
