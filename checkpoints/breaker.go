package checkpoints

import "time"

// BreakerTripped reports whether d's circuit breaker is open: at least
// d.BreakerThreshold of the failures happened within d.BreakerWindow before
// now. The window is half-open, (now-window, now]: a failure exactly one
// window old no longer counts. Failures stamped after now (another replica's
// clock running ahead) count. A threshold or window of 0 or less never trips.
func BreakerTripped(d Definition, failures []time.Time, now time.Time) bool {
	if d.BreakerThreshold <= 0 || d.BreakerWindow <= 0 {
		return false
	}
	since := now.Add(-d.BreakerWindow)
	n := 0
	for _, f := range failures {
		if f.After(since) {
			n++
		}
	}
	return n >= d.BreakerThreshold
}
