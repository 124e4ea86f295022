//go:build faults

package faults

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestKill9OfRedisKeepsAnAcknowledgedDecision: a decision the engine
// acknowledged is on disk (appendfsync always) when Redis is killed with
// SIGKILL right after; once Redis is back the run acts on it.
func TestKill9OfRedisKeepsAnAcknowledgedDecision(t *testing.T) {
	rp := startRedis(t)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, nil)
	a := w.replica(w.redis, true)
	r := w.start(a, checkpoints.ModeGuided, "")
	plan := w.rec.next(t)
	if _, err := a.Engine.Decide(context.Background(), plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
		t.Fatal(err)
	}
	rp.kill() // at once: the worker may not even have read the decision
	killed := time.Now()
	rp.start()
	back := time.Now()
	got, err := a.Engine.Load(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	inst := got.Instance(plan.ID)
	if inst == nil || inst.Decision == nil || inst.Decision.Action != checkpoints.Approve {
		t.Fatalf("after kill -9 the plan review is %+v: the acknowledged decision was lost", inst)
	}
	draft := w.rec.next(t)
	if draft.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("next checkpoint %s, want the draft review", draft.DefinitionID)
	}
	t.Logf("decision kept across kill -9 of Redis (down %s)", back.Sub(killed).Round(time.Millisecond))
	within(t, "the run reached its next checkpoint after Redis was back in", time.Since(back), takeoverAndSteps, w.settings())
}

// TestGracefulRedisRestartMidWait: Redis restarts while a run waits at a
// checkpoint; a click afterwards is recorded and acted on at once.
func TestGracefulRedisRestartMidWait(t *testing.T) {
	rp := startRedis(t)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, nil)
	a := w.replica(w.redis, true)
	w.start(a, checkpoints.ModeGuided, "")
	plan := w.rec.next(t)
	rp.shutdown()
	rp.start()
	back := time.Now()
	if _, err := a.Engine.Decide(context.Background(), plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
		t.Fatalf("decide after the restart: %v", err)
	}
	decided := time.Since(back)
	draft := w.rec.next(t)
	if draft.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("next checkpoint %s, want the draft review", draft.DefinitionID)
	}
	within(t, "after a graceful restart the click was recorded after Redis was back in", decided, clickRecorded, w.settings())
	within(t, "the run reached its next checkpoint after Redis was back in", time.Since(back), takeoverAndSteps, w.settings())
}

// TestGracefulRedisRestartMidStep: Redis restarts while a worker waits for
// the model mid-step; the worker's lease cannot be refreshed, the step is
// given up and taken up again within seconds of Redis being back (not after
// a rescue pass), and the run finishes once.
func TestGracefulRedisRestartMidStep(t *testing.T) {
	rp := startRedis(t)
	const slowCall = 3 * time.Second
	res := slowFirst("analysis", slowCall)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", res, nil)
	a := w.replica(w.redis, true)
	r := w.start(a, checkpoints.ModeAuto, "")
	eventually(t, waitLimit, "the analysis call", func() bool { n, _, _, _ := w.model.stats("analysis"); return n == 1 })
	rp.shutdown()
	time.Sleep(time.Second) // Redis stays down for a second: the fault, not a synchronisation
	rp.start()
	back := time.Now()
	done := w.rec.finish(t)
	if done.ID != r.ID || done.Status != pipeline.StatusCompleted {
		t.Fatalf("run ended %s: %s", done.Status, done.Failure)
	}
	_, peak, started, _ := w.model.stats("analysis")
	s := w.settings()
	within(t, "Redis down 1 s mid-step: the run finished after Redis was back in", time.Since(back), bound[time.Duration]{
		"2×RUN_LEASE + the 3 s call + 5 s of steps", func(x settings) time.Duration { return 2*x.lease + slowCall + stepsWork },
	}, s)
	t.Logf("%d analysis calls", len(started))
	within(t, "analysis calls in flight at once", peak, oneCallInFlight, s)
	within(t, "plans made (recorded work redone if more)", res.Count("research_plan"), nothingTwice, s)
}

// TestASaveThatCommitsButWhoseReplyIsLost: the decision's save reaches
// Redis and commits, but its reply is withheld by the proxy (a real TCP
// stall); the engine does not claim "nothing was changed". Whatever it says
// is true, and the run goes on with the decision applied once.
func TestASaveThatCommitsButWhoseReplyIsLost(t *testing.T) {
	rp := startRedis(t)
	w := newWorld(t, "redis://"+rp.Addr()+"/0", &researchtest.Researcher{}, nil)
	worker := w.replica(w.redis, true)
	px := newProxy(t, rp.Addr())
	bot := w.replica(px.URL(), false) // the replica the click reaches
	r := w.start(worker, checkpoints.ModeGuided, "")
	plan := w.rec.next(t)
	var armed atomic.Bool
	armed.Store(true)
	// The decision's save is the first script the bot's client runs (sent
	// as EVAL, the client's first of it); before the queue was the store's
	// indexes, the stall met asynq's EVALSHA of the enqueue that followed.
	stallReplyOf{"script", &armed, px}.install(bot.Conn.Client)
	start := time.Now()
	_, err := bot.Engine.Decide(context.Background(), plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
	told := time.Since(start)
	if armed.Load() {
		t.Fatal("the decision's save was never written: the test stalled nothing")
	}
	px.remove("stall")
	switch {
	case err == nil:
		t.Log("Decide: recorded")
	case errors.Is(err, pipeline.ErrDecisionUnknown):
		t.Log("Decide: unknown")
	default:
		t.Fatalf("Decide said %v: that claims nothing was changed, but the save committed", err)
	}
	got, lerr := worker.Engine.Load(context.Background(), r.ID)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if inst := got.Instance(plan.ID); inst.Decision == nil {
		t.Fatalf("the save did not commit (%s): the test did not stall the reply of the decision's save", inst.State)
	}
	draft := w.rec.next(t)
	if draft.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("next checkpoint %s, want the draft review", draft.DefinitionID)
	}
	s := w.settings()
	t.Logf("a committed save whose reply was withheld: the clicker was told %q", outcome(err))
	within(t, "the clicker was told after", told, unknownOutcome, s)
	within(t, "the run went on after the click in", time.Since(start), bound[time.Duration]{
		unknownOutcome.rule + " + 2×RUN_LEASE + 5 s of steps",
		func(x settings) time.Duration { return unknownOutcome.at(x) + takeoverAndSteps.at(x) },
	}, s)
	final, _ := worker.Engine.Load(context.Background(), r.ID)
	within(t, "plan review decisions", countDecisions(final, checkpoints.PlanReview), nothingTwice, s)
}

func outcome(err error) string {
	if err == nil {
		return "recorded"
	}
	return err.Error()
}

// countDecisions counts decided instances of a definition in a run.
func countDecisions(r *pipeline.Run, def string) int {
	n := 0
	for _, c := range r.Checkpoints {
		if c.DefinitionID == def && c.Decision != nil {
			n++
		}
	}
	return n
}
