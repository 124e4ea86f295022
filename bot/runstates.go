package bot

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// runStates is a Prometheus collector that counts the unfinished runs by
// state at scrape time, from the shared store, so every replica reports the
// same picture.
type runStates struct {
	desc  *prometheus.Desc
	count func(ctx context.Context) (map[string]int, error)
}

func (c *runStates) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *runStates) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for state, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), state)
	}
}

// WatchRunStates adds the gauge researchbot_runs{state} of unfinished runs
// (queued, running, waiting), counted by count at each scrape.
func (m *Metrics) WatchRunStates(count func(ctx context.Context) (map[string]int, error)) {
	m.reg.MustRegister(&runStates{
		desc:  prometheus.NewDesc("researchbot_runs", "Unfinished research runs, by state.", []string{"state"}, nil),
		count: count,
	})
}

// oldestUnleased is a Prometheus collector of the age of the oldest run
// that has work but no worker, read at scrape time.
type oldestUnleased struct {
	desc *prometheus.Desc
	age  func(ctx context.Context) (time.Duration, error)
}

func (c *oldestUnleased) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *oldestUnleased) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	age, err := c.age(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, age.Seconds())
}

// WatchOldestUnleased adds the gauge researchbot_oldest_unleased_run_age_seconds:
// how long the oldest run with work in this process's queues has gone
// without a worker holding it (0 when none waits). A value that grows past
// twice RUN_LEASE means runs are not being taken over.
func (m *Metrics) WatchOldestUnleased(age func(ctx context.Context) (time.Duration, error)) {
	m.reg.MustRegister(&oldestUnleased{
		desc: prometheus.NewDesc("researchbot_oldest_unleased_run_age_seconds",
			"Age of the oldest run with work that no worker holds (time since its last save).", nil, nil),
		age: age,
	})
}
