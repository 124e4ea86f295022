package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/researchbot/researchbot/internal/obs"
)

// Metrics are the process's metrics (obs.Metrics, which the engine and
// the workers report to, and which serve and worker share) with the Slack
// adapter's own counters added to the same registry. It implements
// pipeline.Observer, so the same value is given to the Engine and to the bot.
type Metrics struct {
	*obs.Metrics
	slackCalls   *prometheus.CounterVec
	slackLimited *prometheus.CounterVec
	ackLatency   *prometheus.HistogramVec
	events       *prometheus.CounterVec
	rateLimited  *prometheus.CounterVec
}

// NewMetrics creates the process's metrics with the Slack counters.
func NewMetrics() *Metrics { return NewSlackMetrics(obs.New()) }

// NewSlackMetrics adds the Slack adapter's counters to base's registry.
func NewSlackMetrics(base *obs.Metrics) *Metrics {
	m := &Metrics{
		Metrics: base,
		slackCalls: base.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_api_calls_total", Help: "Slack Web API calls, by method and HTTP status."}, "method", "status"),
		slackLimited: base.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_api_rate_limited_total", Help: "Slack Web API calls answered 429, by method."}, "method"),
		ackLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_slack_ack_latency_seconds", Help: "Time from receiving a Socket Mode envelope to acking it.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5}}, []string{"type"}),
		events: base.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_events_total", Help: "Socket Mode events received, by type."}, "type"),
		rateLimited: base.CounterVec(prometheus.CounterOpts{
			Name: "researchbot_requests_rate_limited_total", Help: "/research requests refused by the per-user or per-workspace limit."}, "scope"),
	}
	if err := base.Registry().Register(m.ackLatency); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			panic(err)
		}
		m.ackLatency = are.ExistingCollector.(*prometheus.HistogramVec)
	}
	return m
}

// runStarted counts a run started from Slack.
func (m *Metrics) runStarted() { m.RunStarted() }

// ack records the latency of one ack.
func (m *Metrics) ack(kind string, d time.Duration) {
	m.ackLatency.WithLabelValues(kind).Observe(d.Seconds())
}

// event counts one Socket Mode event.
func (m *Metrics) event(kind string) { m.events.WithLabelValues(kind).Inc() }

// Limited counts a request refused by a rate limit, by scope ("user",
// "workspace", or a feature's own: "follow_up", "steering"), on
// researchbot_requests_rate_limited_total.
func (m *Metrics) Limited(scope string) { m.rateLimited.WithLabelValues(scope).Inc() }

// Transport wraps an HTTP transport so every Slack Web API call is counted
// by method and status, and 429s separately.
func (m *Metrics) Transport(next http.RoundTripper) http.RoundTripper {
	next = cmp.Or(next, http.DefaultTransport)
	return countingTransport{m: m, next: next}
}

type countingTransport struct {
	m    *Metrics
	next http.RoundTripper
}

// RoundTrip counts the call by method and status.
func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.URL.Path
	if i := strings.LastIndex(method, "/"); i >= 0 {
		method = method[i+1:]
	}
	if !strings.Contains(req.URL.Path, "/api/") {
		method = "upload"
	}
	resp, err := t.next.RoundTrip(req)
	status := "error"
	if err == nil {
		status = fmt.Sprint(resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			t.m.slackLimited.WithLabelValues(method).Inc()
		}
	}
	t.m.slackCalls.WithLabelValues(method, status).Inc()
	return resp, err
}

// Pinger reports whether a dependency is reachable (a Redis client's Ping).
type Pinger func(ctx context.Context) error

// HealthHandler serves /healthz (the process is up), /readyz (Slack is
// connected and Redis answers) and /metrics (Prometheus): obs.Handler with
// the bot's readiness checks.
func HealthHandler(m *Metrics, slackConnected func() bool, redisPing Pinger) http.Handler {
	checks := []obs.Check{{Name: "slack", Ready: func(context.Context) error {
		if slackConnected == nil || !slackConnected() {
			return errors.New("not connected")
		}
		return nil
	}}}
	if redisPing != nil {
		checks = append(checks, obs.Check{Name: "redis", Ready: func(ctx context.Context) error {
			if redisPing(ctx) != nil {
				return errors.New("unreachable")
			}
			return nil
		}})
	}
	return obs.Handler(m.Metrics, checks...)
}
