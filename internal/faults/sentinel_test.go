//go:build faults

package faults

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// sentinelRecovery bounds a run's recovery from a crashed master: the
// sentinels call it down after down-after-milliseconds and promote the
// replica within a failover-timeout; the clients hear of it, the run's
// lease (its holder lost it with the master) is taken again within
// 2×RUN_LEASE, and the rest of its steps run.
var sentinelRecovery = bound[time.Duration]{
	"down-after-milliseconds + failover-timeout + 2×RUN_LEASE + 5 s of steps",
	func(x settings) time.Duration { return x.downAfter + x.failoverTimeout + 2*x.lease + stepsWork },
}

// TestSentinelMasterKilledMidStep: researchbot runs on a Redis watched by
// three sentinels (REDIS_URL in the Sentinel form), with two workers. The
// master redis-server is killed with SIGKILL while a run's analysis call
// is in flight — no SENTINEL FAILOVER, no WAIT: a crash. The sentinels
// promote the replica; the run finishes, once, without a second plan or
// two step calls at once, within its bound.
//
// Replication is asynchronous, so the last writes the master acknowledged
// before it died may be missing on the replica: the step they belonged to
// may run again (a call paid twice), never at the same time as itself.
func TestSentinelMasterKilledMidStep(t *testing.T) {
	s := redistest.StartSentinel(t)
	killedAt := make(chan time.Time, 1)
	var once sync.Once
	res := &researchtest.Researcher{Before: func(schema string, n int) *llmtest.Reply {
		if schema == "analysis" && n == 1 {
			once.Do(func() {
				s.Master.Kill()
				killedAt <- time.Now()
			})
		}
		return nil
	}}
	w := newWorld(t, s.URL, res, nil)
	a := w.replica(w.redis, true)
	w.replica(w.redis, true) // a second worker, as a deployment runs them
	r := w.start(a, checkpoints.ModeAuto, "")
	done := w.rec.finish(t)
	var took time.Duration
	select {
	case killed := <-killedAt:
		took = time.Since(killed)
	default:
		t.Fatal("the run finished without an analysis call: the master was never killed")
	}
	if done.ID != r.ID || done.Status != pipeline.StatusCompleted {
		t.Fatalf("run %s ended %s: %s%s", done.ID, done.Status, done.Failure, done.FallbackReason)
	}
	if m, err := s.CurrentMaster(context.Background()); err != nil || m != s.Replica.Addr {
		t.Fatalf("master after the run = %s (%v), want the promoted replica %s", m, err, s.Replica.Addr)
	}
	x := w.settings()
	x.downAfter, x.failoverTimeout = redistest.DownAfter, redistest.FailoverTimeout
	_, peak, started, _ := w.model.stats("analysis")
	t.Logf("%d analysis calls", len(started))
	within(t, "master killed with SIGKILL mid-step: the run finished after", took, sentinelRecovery, x)
	within(t, "plans made", res.Count("research_plan"), nothingTwice, x)
	within(t, "analysis calls in flight at once", peak, oneCallInFlight, x)
	select { // a run presented twice would show up here at once
	case again := <-w.rec.done:
		within(t, "times the run was presented", 2, nothingTwice, x)
		t.Logf("presented again: %s", again.ID)
	case <-time.After(time.Second):
		within(t, "times the run was presented", 1, nothingTwice, x)
	}
}
