package bot

import (
	"errors"

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
		duplicates: counterVec(m.reg, prometheus.CounterOpts{
			Name: "researchbot_slack_repeated_deliveries_total",
			Help: "Slack deliveries dropped because they had been handled already (Slack retries and redeliveries), by type."}, "type"),
		foreign: counterVec(m.reg, prometheus.CounterOpts{
			Name: "researchbot_slack_foreign_requests_total",
			Help: "Slack requests refused because they came from a workspace or app this researchbot is not installed for, by type."}, "type"),
	}
}

// counterVec registers a counter vector in reg, or returns the one registered already.
func counterVec(reg *prometheus.Registry, opts prometheus.CounterOpts, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(opts, labels)
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				return existing
			}
		}
		panic(err) // two different metrics under one name: a programming error
	}
	return c
}

func (g guardMetrics) duplicate(kind string) { g.duplicates.WithLabelValues(kind).Inc() }

func (g guardMetrics) refused(kind string) { g.foreign.WithLabelValues(kind).Inc() }
