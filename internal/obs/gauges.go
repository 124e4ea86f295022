package obs

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// scrapeTimeout bounds what a scrape waits for the shared store.
const scrapeTimeout = 2 * time.Second

// gauge is a Prometheus collector whose values are read at scrape time.
type gauge struct {
	desc *prometheus.Desc
	read func(ctx context.Context, ch chan<- prometheus.Metric, desc *prometheus.Desc) error
}

func (g *gauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gauge) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	if err := g.read(ctx, ch, g.desc); err != nil {
		ch <- prometheus.NewInvalidMetric(g.desc, err)
	}
}

// WatchRunStates adds the gauge researchbot_runs{state} of unfinished runs
// (queued, running, waiting), counted by count at each scrape from the
// shared store, so every replica reports the same picture.
func (m *Metrics) WatchRunStates(count func(ctx context.Context) (map[string]int, error)) {
	m.reg.MustRegister(&gauge{
		desc: prometheus.NewDesc("researchbot_runs", "Unfinished research runs, by state.", []string{"state"}, nil),
		read: func(ctx context.Context, ch chan<- prometheus.Metric, desc *prometheus.Desc) error {
			counts, err := count(ctx)
			for state, n := range counts {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n), state)
			}
			return err
		},
	})
}

// WatchOldestUnleased adds the gauge researchbot_oldest_unleased_run_age_seconds:
// how long the oldest run with work in this process's queues has gone
// without a worker holding it (0 when none waits). A value that grows past
// twice RUN_LEASE means runs are not being taken over.
func (m *Metrics) WatchOldestUnleased(age func(ctx context.Context) (time.Duration, error)) {
	m.reg.MustRegister(&gauge{
		desc: prometheus.NewDesc("researchbot_oldest_unleased_run_age_seconds",
			"Age of the oldest run with work that no worker holds (time since its last save).", nil, nil),
		read: func(ctx context.Context, ch chan<- prometheus.Metric, desc *prometheus.Desc) error {
			a, err := age(ctx)
			if err == nil {
				ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, a.Seconds())
			}
			return err
		},
	})
}

// QueueStat is one work queue at a moment.
type QueueStat struct {
	// Tasks by state: pending (waiting for a worker), active, scheduled
	// (timers, retries' waits), retry.
	Pending, Active, Scheduled, Retry int
	// Latency is how long the oldest pending task has waited.
	Latency time.Duration
}

// WatchQueues adds the gauges researchbot_queue_tasks{queue,state} and
// researchbot_queue_latency_seconds{queue}, read by stats at each scrape.
func (m *Metrics) WatchQueues(stats func(ctx context.Context) (map[string]QueueStat, error)) {
	tasks := prometheus.NewDesc("researchbot_queue_tasks", "Tasks in a work queue, by state (pending, active, scheduled, retry).", []string{"queue", "state"}, nil)
	latency := prometheus.NewDesc("researchbot_queue_latency_seconds", "How long the oldest pending task of a work queue has waited for a worker.", []string{"queue"}, nil)
	m.reg.MustRegister(&gauge{
		desc: tasks,
		read: func(ctx context.Context, ch chan<- prometheus.Metric, _ *prometheus.Desc) error {
			byQueue, err := stats(ctx)
			for q, s := range byQueue {
				for state, n := range map[string]int{"pending": s.Pending, "active": s.Active, "scheduled": s.Scheduled, "retry": s.Retry} {
					ch <- prometheus.MustNewConstMetric(tasks, prometheus.GaugeValue, float64(n), q, state)
				}
				ch <- prometheus.MustNewConstMetric(latency, prometheus.GaugeValue, s.Latency.Seconds(), q)
			}
			return err
		},
	}, describeOnly{latency})
}

// describeOnly declares a metric another collector sends.
type describeOnly struct{ desc *prometheus.Desc }

func (d describeOnly) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }
func (describeOnly) Collect(chan<- prometheus.Metric)      {}
