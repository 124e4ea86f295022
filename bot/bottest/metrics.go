package bottest

import (
	"testing"

	"github.com/researchbot/researchbot/bot"
)

// CounterValue is the value of counter name's series whose label has the
// value label in m (0 when there is none yet: counters appear at their
// first count).
func CounterValue(t *testing.T, m *bot.Metrics, name, label string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, metric := range mf.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetValue() == label {
					return metric.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
