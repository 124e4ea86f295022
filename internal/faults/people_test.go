//go:build faults

package faults

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// race decides one checkpoint from two replicas at the same moment and
// returns each replica's answer.
func race(t *testing.T, a, b *replica, inst string, da, db checkpoints.Decision) [2]error {
	t.Helper()
	var errs [2]error
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, x := range []struct {
		r *replica
		d checkpoints.Decision
	}{{a, da}, {b, db}} {
		wg.Go(func() {
			<-gate
			_, errs[i] = x.r.Engine.Decide(context.Background(), inst, x.d)
		})
	}
	close(gate)
	wg.Wait()
	return errs
}

// TestSimultaneousDecisionsAcrossReplicas: the same checkpoint is decided
// at the same moment through two replicas (each with its own Redis
// connections) — a double click, and an approve racing a reject. Exactly
// one decision is recorded and applied; the other replica's answer says it
// was not applied, and the run follows the recorded one.
func TestSimultaneousDecisionsAcrossReplicas(t *testing.T) {
	const rounds = 10
	for _, tc := range []struct {
		name   string
		da, db checkpoints.Decision
	}{
		{"double click", checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}},
		{"approve and reject", checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}, checkpoints.Decision{Action: checkpoints.Reject, By: "U1", Note: "too broad"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := startRedis(t)
			w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, nil)
			a, b := w.replica(w.redis, true), w.replica(w.redis, true)
			wins := [2]int{}
			var slowest time.Duration
			for range rounds {
				r := w.start(a, checkpoints.ModeGuided, "")
				plan := w.rec.next(t)
				start := time.Now()
				errs := race(t, a, b, plan.ID, tc.da, tc.db)
				slowest = max(slowest, time.Since(start))
				ok := 0
				for i, err := range errs {
					switch {
					case err == nil:
						ok++
						wins[i]++
					case errors.Is(err, checkpoints.ErrAlreadyDecided), errors.Is(err, pipeline.ErrNotCurrent):
					default:
						t.Fatalf("replica %d: %v", i, err)
					}
				}
				if ok != 1 {
					t.Fatalf("%d decisions recorded, want exactly 1: %v", ok, errs)
				}
				winner := tc.da
				if errs[0] != nil {
					winner = tc.db
				}
				next := w.rec.next(t) // the recorded decision is applied: draft review, or a new plan
				want := checkpoints.DraftReview
				if winner.Action == checkpoints.Reject {
					want = checkpoints.PlanReview
				}
				if next.DefinitionID != want || next.ID == plan.ID {
					t.Fatalf("after %s the run offered %s, want %s", winner.Action, next.DefinitionID, want)
				}
				got, err := a.Engine.Load(context.Background(), r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if inst := got.Instance(plan.ID); inst.Decision == nil || inst.Decision.Action != winner.Action {
					t.Fatalf("recorded %+v, the winner was %s", inst.Decision, winner.Action)
				}
				if err := a.Engine.Cancel(context.Background(), r.ID, "U1"); err != nil {
					t.Fatal(err)
				}
				w.rec.finish(t)
			}
			t.Logf("%d races: exactly one decision recorded each time (replica A won %d, B %d)", rounds, wins[0], wins[1])
			within(t, "both replicas answered within", slowest, raceAnswered, w.settings())
		})
	}
}

// TestCrashAfterTheDecisionIsSaved: the decision is saved and its worker
// is cut off from Redis at once (it may have taken the wake-up or not);
// another worker carries the run to its next step within 2×RUN_LEASE, and
// the next step runs once.
func TestCrashAfterTheDecisionIsSaved(t *testing.T) {
	rp := startRedis(t)
	res := slowFirst("analysis", 5*time.Second)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", res, nil)
	pa := newProxy(t, rp.Addr())
	a := w.replica(pa.URL(), true)
	front := w.replica(w.redis, false)
	w.start(a, checkpoints.ModeGuided, "")
	plan := w.rec.next(t)
	if _, err := front.Engine.Decide(context.Background(), plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
		t.Fatal(err)
	}
	pa.down()
	cut := time.Now()
	defer pa.up()
	w.replica(w.redis, true) // B
	took, peak := w.analysisAfter(t, cut)
	s := w.settings()
	within(t, "worker cut off right after the decision was saved: the next step started on another worker after", took, takeover, s)
	within(t, "analysis calls in flight at once", peak, oneCallInFlight, s)
}

// raceAnswered bounds a decision racing another on a Redis that answers:
// each conflict costs a read and a save, a few milliseconds each, 100 ms
// allowed for a loaded machine.
var raceAnswered = bound[time.Duration]{"8 conflict retries × 2 commands × 100 ms + 0.4 s",
	func(settings) time.Duration { return 8*2*100*time.Millisecond + 400*time.Millisecond }}
