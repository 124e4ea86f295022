package obs

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Metrics holds researchbot's Prometheus metrics in its own registry (never
// the global one). It implements pipeline.Observer for the engine, and is
// told about every call to the model, the search backends and the web.
type Metrics struct {
	reg            *prometheus.Registry
	runsStarted    prometheus.Counter
	runsFinished   *prometheus.CounterVec
	stepDuration   *prometheus.HistogramVec
	llmTokens      *prometheus.CounterVec
	llmCost        *prometheus.CounterVec
	llmCalls       *prometheus.HistogramVec
	searches       *prometheus.CounterVec
	searchDuration prometheus.Histogram
	fetches        *prometheus.HistogramVec
	fetchBytes     prometheus.Counter
	checkpointWait *prometheus.HistogramVec
	decisions      *prometheus.CounterVec
}

var _ pipeline.Observer = (*Metrics)(nil)

// New creates the metrics and their registry (with Go and process
// collectors).
func New() *Metrics {
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
		llmCalls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_llm_call_duration_seconds", Help: "LLM calls (retries included) by role and outcome (ok, error, unusable, context_length, cancelled), and their duration.",
			Buckets: []float64{0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}}, []string{"role", "outcome"}),
		searches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_searches_total", Help: "Searches per backend, by outcome (results, empty, error, rate_limited)."}, []string{"backend", "outcome"}),
		searchDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "researchbot_search_duration_seconds", Help: "Duration of one search across all active backends.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20}}),
		fetches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_fetch_duration_seconds", Help: "Page fetches by outcome (2xx, or why not: blocked_address for the SSRF guard, http_status, timeout, robots, …), and their duration.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20}}, []string{"outcome"}),
		fetchBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "researchbot_fetch_text_bytes_total", Help: "Bytes of main text extracted from fetched pages."}),
		checkpointWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "researchbot_checkpoint_wait_seconds", Help: "Time from offering a checkpoint to its decision.",
			Buckets: []float64{5, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 72 * 3600}}, []string{"definition", "action"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "researchbot_checkpoint_decisions_total", Help: "Checkpoint decisions, by definition and action."}, []string{"definition", "action"}),
	}
	m.reg.MustRegister(m.runsStarted, m.runsFinished, m.stepDuration, m.llmTokens, m.llmCost, m.llmCalls,
		m.searches, m.searchDuration, m.fetches, m.fetchBytes, m.checkpointWait, m.decisions,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry, for tests and the metrics other packages add.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// CounterVec registers a counter vector in the registry, or returns the one
// registered under that name already (several Apps may share the metrics).
func (m *Metrics) CounterVec(opts prometheus.CounterOpts, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(opts, labels)
	if err := m.reg.Register(c); err != nil {
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

// StepDone implements pipeline.Observer.
func (m *Metrics) StepDone(step pipeline.Step, d time.Duration, err error) {
	m.stepDuration.WithLabelValues(string(step), outcome(err)).Observe(d.Seconds())
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

// RunStarted counts a run started from Slack.
func (m *Metrics) RunStarted() { m.runsStarted.Inc() }

// LLMCall records one call to the model: its role, how it ended (ok,
// error, unusable, context_length, cancelled) and how long it took.
func (m *Metrics) LLMCall(role, result string, d time.Duration) {
	m.llmCalls.WithLabelValues(role, result).Observe(d.Seconds())
}

// Search records one search: per backend, how it ended (results, empty,
// error, rate_limited), and how long the whole search took.
func (m *Metrics) Search(outcomes map[string]string, d time.Duration) {
	for backend, o := range outcomes {
		m.searches.WithLabelValues(backend, o).Inc()
	}
	m.searchDuration.Observe(d.Seconds())
}

// Fetch records one page fetch: how it ended (2xx, or the fetcher's reason
// for failing), the bytes of text it gave and how long it took.
func (m *Metrics) Fetch(result string, textBytes int, d time.Duration) {
	m.fetches.WithLabelValues(result).Observe(d.Seconds())
	m.fetchBytes.Add(float64(textBytes))
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
