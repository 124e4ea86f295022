//go:build faults

package faults

import (
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// slowFirst is a model whose first call of schema takes d.
func slowFirst(schema string, d time.Duration) *researchtest.Researcher {
	return &researchtest.Researcher{DelayFor: func(s string, n int) time.Duration {
		if s == schema && n == 1 {
			return d
		}
		return 0
	}}
}

// TestLeaseLostMidStep: worker A is cut off from Redis (its proxy goes
// down) while its analysis call is in flight; worker B runs beside it. A
// cannot refresh its lease, so it cancels its step — the model sees its
// call go away — before B may take the lease; B takes the run over within
// 2×RUN_LEASE. Two analysis calls are never in flight at once, and the run
// finishes once.
func TestLeaseLostMidStep(t *testing.T) {
	rp := startRedis(t)
	res := slowFirst("analysis", 30*time.Second)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", res, nil)
	pa := newProxy(t, rp.Addr())
	a := w.replica(pa.URL(), true)
	r := w.start(a, checkpoints.ModeAuto, "")
	eventually(t, waitLimit, "the analysis call", func() bool { n, _, _, _ := w.model.stats("analysis"); return n == 1 })
	w.replica(w.redis, true) // B, directly on Redis, starts while A works
	cut := time.Now()
	pa.down()
	defer pa.up() // let A's shutdown reach Redis at the end
	var stopped, taken time.Duration
	eventually(t, 30*time.Second, "takeover", func() bool {
		_, _, started, ended := w.model.stats("analysis")
		if len(ended) > 0 && stopped == 0 {
			stopped = ended[0].Sub(cut)
		}
		if len(started) > 1 {
			taken = started[1].Sub(cut)
			return true
		}
		return false
	})
	done := w.rec.finish(t)
	_, peak, _, _ := w.model.stats("analysis")
	if done.ID != r.ID || done.Status != pipeline.StatusCompleted {
		t.Fatalf("run %s ended %s: %s", done.ID, done.Status, done.Failure)
	}
	s := w.settings()
	if stopped == 0 {
		t.Errorf("the cut-off worker's call did not end")
	}
	within(t, "the cut-off worker dropped its model call after losing Redis in", stopped, holderStops, s)
	within(t, "the other took the run over after", taken, takeover, s)
	within(t, "analysis calls in flight at once", peak, oneCallInFlight, s)
	within(t, "plans made", res.Count("research_plan"), nothingTwice, s)
	select {
	case again := <-w.rec.done:
		t.Errorf("run %s shown finished twice", again.ID)
	case <-time.After(time.Second):
	}
}
