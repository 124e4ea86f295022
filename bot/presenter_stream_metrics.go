package bot

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of researchbot_progress_streams_total: how a run's progress came
// to be shown (presenter_stream.go).
const (
	// streamStarted: a streamed plan was started (a run's first, or the
	// next after a checkpoint's decision).
	streamStarted = "started"
	// streamFallbackFeature: Slack answered a feature error; the workspace
	// is remembered as one without streaming and shows the progress message.
	streamFallbackFeature = "fallback_feature"
	// streamFallbackRefused: Slack refused this run's stream (not a feature
	// error); the run shows the progress message.
	streamFallbackRefused = "fallback_refused"
	// streamReplaced: a stream Slack took no more appends on was replaced
	// by a new one.
	streamReplaced = "replaced"
)

// progressStreamMetrics counts the streamed plans started, replaced and
// given up for the progress message. The zero value counts nothing (a
// Presenter without Metrics).
type progressStreamMetrics struct {
	outcomes *prometheus.CounterVec
}

// newProgressStreamMetrics registers the counter in m's registry, or reuses
// it when another Presenter sharing m registered it first; nil m counts
// nothing.
func newProgressStreamMetrics(m *Metrics) progressStreamMetrics {
	if m == nil {
		return progressStreamMetrics{}
	}
	outcomes := m.CounterVec(prometheus.CounterOpts{
		Name: "researchbot_progress_streams_total",
		Help: "How runs' progress was shown as a streamed plan: streams started, replaced after Slack ended them, and fallbacks to the progress message (a workspace without the feature, or a refused stream), by outcome."}, "outcome")
	for _, o := range []string{streamStarted, streamFallbackFeature, streamFallbackRefused, streamReplaced} {
		outcomes.WithLabelValues(o) // shown as 0 before the first
	}
	return progressStreamMetrics{outcomes: outcomes}
}

// count adds one to outcome.
func (s progressStreamMetrics) count(outcome string) {
	if s.outcomes != nil {
		s.outcomes.WithLabelValues(outcome).Inc()
	}
}
