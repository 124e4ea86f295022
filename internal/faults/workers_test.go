//go:build faults

package faults

import (
	"context"
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

// TestAWakeUpLostWhileTheWorkerWasCutOff: the only worker's connections to
// Redis (its wake-up subscription among them) are cut while a front
// replica, which runs no worker, records the plan's approval: the wake-up
// it publishes reaches nobody. Wake-ups are only hints; the run is in its
// queue's index of runs with work, so the worker's claim passes take it
// once it is back: the next step starts within 2×RUN_LEASE of the
// decision, once.
func TestAWakeUpLostWhileTheWorkerWasCutOff(t *testing.T) {
	rp := startRedis(t)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, nil)
	pa := newProxy(t, rp.Addr())
	a := w.replica(pa.URL(), true)
	front := w.replica(w.redis, false)
	r := w.start(a, checkpoints.ModeGuided, "")
	plan := w.rec.next(t)
	// The worker is done with the run (it reads the run once more after
	// giving its lease back, which would find the decision by itself).
	eventually(t, waitLimit, "the worker to give the run's lease back", func() bool {
		held, err := front.Locker.Held(context.Background(), r.ID)
		return err == nil && !held
	})
	pa.down()
	// The worker's subscription is gone from Redis: a wake-up now reaches
	// nobody (Redis delivers to the subscribers it has at that moment).
	eventually(t, waitLimit, "the worker's subscription to be gone", func() bool {
		n, err := front.Conn.Client.PubSubNumSub(context.Background(), "rb:wake:test").Result()
		return err == nil && n["rb:wake:test"] == 0
	})
	decided := time.Now()
	if _, err := front.Engine.Decide(context.Background(), plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
		t.Fatal(err)
	}
	pa.up()
	took, peak := w.analysisAfter(t, decided)
	s := w.settings()
	within(t, "a wake-up lost while the only worker was cut off: the next step started after", took, takeover, s)
	within(t, "analysis calls in flight at once", peak, oneCallInFlight, s)
}
