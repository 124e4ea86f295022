package bot

import (
	"github.com/prometheus/client_golang/prometheus"
)

// guardMetrics counts the deliveries the bot's guards dropped: repeated
// deliveries and requests from outside the installation.
type guardMetrics struct {
	duplicates *prometheus.CounterVec
	foreign    *prometheus.CounterVec
}

// newGuardMetrics registers the counters in m's registry, or reuses them when
// another App sharing m registered them first.
func newGuardMetrics(m *Metrics) guardMetrics {
	return guardMetrics{
		duplicates: m.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_repeated_deliveries_total",
			Help: "Slack deliveries dropped because they had been handled already (Slack retries and redeliveries), by type."}, "type"),
		foreign: m.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_foreign_requests_total",
			Help: "Slack requests refused because they came from a workspace or app this researchbot is not installed for, by type."}, "type"),
	}
}

func (g guardMetrics) duplicate(kind string) { g.duplicates.WithLabelValues(kind).Inc() }

func (g guardMetrics) refused(kind string) { g.foreign.WithLabelValues(kind).Inc() }
