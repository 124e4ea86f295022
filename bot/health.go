package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Metrics holds researchbot's Prometheus metrics in its own registry (never
// the global one). It implements pipeline.Observer, so the same value is
// given to the Engine and to the bot.
type Metrics struct {
	reg            *prometheus.Registry
	runsStarted    prometheus.Counter
	runsFinished   *prometheus.CounterVec
	stepDuration   *prometheus.HistogramVec
	llmTokens      *prometheus.CounterVec
	llmCost        *prometheus.CounterVec
	slackCalls     *prometheus.CounterVec
	slackLimited   *prometheus.CounterVec
	ackLatency     *prometheus.HistogramVec
	events         *prometheus.CounterVec
	checkpointWait *prometheus.HistogramVec
	decisions      *prometheus.CounterVec
	rateLimited    *prometheus.CounterVec
}

var _ pipeline.Observer = (*Metrics)(nil)

// NewMetrics creates the metrics and their registry (with Go and process
// collectors).
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		runsStarted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "researchbot_runs_started_total", Help: "Research runs started from Slack by this process."}),
		runsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_runs_finished_total", Help: "Research runs finished, by final state."}, []string{"state"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_step_duration_seconds", Help: "Duration of pipeline steps.",
			Buckets: []float64{0.05, 0.25, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}}, []string{"step", "outcome"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_llm_tokens_total", Help: "LLM tokens used, by role and kind (prompt, completion)."}, []string{"role", "kind"}),
		llmCost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_llm_spend_usd_total", Help: "LLM spend in US dollars, by role."}, []string{"role"}),
		slackCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_api_calls_total", Help: "Slack Web API calls, by method and HTTP status."}, []string{"method", "status"}),
		slackLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_api_rate_limited_total", Help: "Slack Web API calls answered 429, by method."}, []string{"method"}),
		ackLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_slack_ack_latency_seconds", Help: "Time from receiving a Socket Mode envelope to acking it.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5}}, []string{"type"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_slack_events_total", Help: "Socket Mode events received, by type."}, []string{"type"}),
		checkpointWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_checkpoint_wait_seconds", Help: "Time from offering a checkpoint to its decision.",
			Buckets: []float64{5, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 72 * 3600}}, []string{"definition", "action"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_checkpoint_decisions_total", Help: "Checkpoint decisions, by definition and action."}, []string{"definition", "action"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_requests_rate_limited_total", Help: "/research requests refused by the per-user or per-workspace limit."}, []string{"scope"}),
	}
	m.reg.MustRegister(m.runsStarted, m.runsFinished, m.stepDuration, m.llmTokens, m.llmCost,
		m.slackCalls, m.slackLimited, m.ackLatency, m.events, m.checkpointWait, m.decisions, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// StepDone implements pipeline.Observer.
func (m *Metrics) StepDone(step pipeline.Step, d time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.stepDuration.WithLabelValues(string(step), outcome).Observe(d.Seconds())
}

// LLMUsage implements pipeline.Observer.
func (m *Metrics) LLMUsage(role pipeline.Role, u pipeline.Usage) {
	m.llmTokens.WithLabelValues(string(role), "prompt").Add(float64(u.PromptTokens))
	m.llmTokens.WithLabelValues(string(role), "completion").Add(float64(u.CompletionTokens))
	m.llmCost.WithLabelValues(string(role)).Add(u.CostUSD)
}

// RunFinished implements pipeline.Observer.
func (m *Metrics) RunFinished(status pipeline.Status) {
	m.runsFinished.WithLabelValues(string(status)).Inc()
}

// CheckpointDecided implements pipeline.Observer.
func (m *Metrics) CheckpointDecided(defID string, action checkpoints.Action, waited time.Duration) {
	m.decisions.WithLabelValues(defID, string(action)).Inc()
	m.checkpointWait.WithLabelValues(defID, string(action)).Observe(waited.Seconds())
}

// runStarted counts a run started from Slack.
func (m *Metrics) runStarted() { m.runsStarted.Inc() }

// ack records the latency of one ack.
func (m *Metrics) ack(kind string, d time.Duration) {
	m.ackLatency.WithLabelValues(kind).Observe(d.Seconds())
}

// event counts one Socket Mode event.
func (m *Metrics) event(kind string) { m.events.WithLabelValues(kind).Inc() }

// limited counts a refused request.
func (m *Metrics) limited(scope string) { m.rateLimited.WithLabelValues(scope).Inc() }

// Transport wraps an HTTP transport so every Slack Web API call is counted
// by method and status, and 429s separately.
func (m *Metrics) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
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
// connected and Redis answers) and /metrics (Prometheus).
func HealthHandler(m *Metrics, slackConnected func() bool, redisPing Pinger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		var problems []string
		if slackConnected == nil || !slackConnected() {
			problems = append(problems, "slack: not connected")
		}
		if redisPing != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := redisPing(ctx); err != nil {
				problems = append(problems, "redis: unreachable")
			}
		}
		if len(problems) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(strings.Join(problems, "\n") + "\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	return mux
}
