package bot

import (
	"errors"
	"log/slog"
	"strings"

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

// Need is one port a feature's Config must have: how the error names it
// ("an engine") and whether it is there.
type Need struct {
	Name    string
	Present bool
}

// Require is the rule every feature's New states its ports with: nil when
// k has the App's Sender and every need is present, otherwise one error
// that starts with lacking ("bot: follow-ups need") and names all that is
// missing, the Sender first.
func (k Kit) Require(lacking string, needs ...Need) error {
	var missing []string
	if k.Sender == nil {
		missing = append(missing, "a Sender (the Web API client the App shares)")
	}
	for _, n := range needs {
		if !n.Present {
			missing = append(missing, n.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errors.New(lacking + " " + strings.Join(missing, ", "))
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
