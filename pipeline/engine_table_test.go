package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestEngineOperationsOnAWaitingRun drives Decide, Cancel, CheckTimeout,
// Fail and Advance, one after another, on a run waiting at a checkpoint
// the engine has offered (an Advance first), against the real store: what
// each returns, and what the run becomes.
func TestEngineOperationsOnAWaitingRun(t *testing.T) {
	ctx := context.Background()
	approve := checkpoints.Decision{Action: checkpoints.Approve, By: "U1", At: t0}
	type op func(e *env, inst checkpoints.Instance) error
	decide := func(d checkpoints.Decision) op {
		return func(e *env, inst checkpoints.Instance) error {
			_, err := e.eng.Decide(ctx, inst.ID, d)
			return err
		}
	}
	cancel := func(e *env, _ checkpoints.Instance) error { return e.eng.Cancel(ctx, "r-1", "U2") }
	advance := func(e *env, _ checkpoints.Instance) error { return e.eng.Advance(ctx, "r-1") }
	timeout := func(after time.Duration) op {
		return func(e *env, inst checkpoints.Instance) error {
			deadline := e.load().Instance(inst.ID).DeadlineAt
			e.clock.Advance(after)
			return e.eng.CheckTimeout(ctx, "r-1", inst.ID, deadline)
		}
	}
	fail := func(e *env, _ checkpoints.Instance) error {
		return e.eng.Fail(ctx, "r-1", errors.New("the queue gave up"))
	}
	for _, tc := range []struct {
		name     string
		optional bool
		ops      []op
		errs     []error // per op: nil, or what errors.Is must match
		status   pipeline.Status
		inst     checkpoints.State
		check    func(t *testing.T, e *env, r *pipeline.Run)
	}{
		{name: "a decision is applied once: its repeat is the same decision, another one is refused",
			ops:    []op{decide(approve), decide(approve), decide(checkpoints.Decision{Action: checkpoints.Reject, By: "U1", At: t0, Note: "no"})},
			errs:   []error{nil, nil, checkpoints.ErrAlreadyDecided},
			status: pipeline.StatusWaiting, inst: checkpoints.StateSubmitted,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				if d := r.Instance("r-1.abc").Decision; d == nil || d.Action != checkpoints.Approve {
					t.Errorf("decision %+v, want the approval", d)
				}
				seen := map[string]bool{}
				for _, w := range e.queue.woken() {
					seen[w] = true
				}
				if len(seen) != 1 {
					t.Errorf("wake-ups %v, want one run version woken", e.queue.woken())
				}
			}},
		{name: "a decision on a checkpoint the run does not have is refused",
			ops: []op{func(e *env, _ checkpoints.Instance) error {
				_, err := e.eng.Decide(ctx, "r-1.nope", approve)
				return err
			}}, errs: []error{errAny},
			status: pipeline.StatusWaiting, inst: checkpoints.StateOffered},
		{name: "a cancelled run takes no decision",
			ops: []op{cancel, advance, decide(approve)}, errs: []error{nil, nil, errAny},
			status: pipeline.StatusCancelled, inst: checkpoints.StateFailed,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				if r.CancelledBy != "U2" {
					t.Errorf("cancelled by %q, want U2", r.CancelledBy)
				}
			}},
		{name: "a timer that goes off early sets itself again and changes nothing",
			ops: []op{timeout(30 * time.Minute)}, errs: []error{nil},
			status: pipeline.StatusWaiting, inst: checkpoints.StateOffered,
			check: func(t *testing.T, e *env, _ *pipeline.Run) {
				if len(e.queue.timers) != 2 {
					t.Errorf("timers set: %v, want two (on offering, then again)", e.queue.timers)
				}
			}},
		{name: "an optional checkpoint's timeout skips it and the run goes on to its end",
			optional: true, ops: []op{timeout(time.Hour)}, errs: []error{nil},
			inst: checkpoints.StateSkipped,
			check: func(t *testing.T, _ *env, r *pipeline.Run) {
				if !r.Status.Final() {
					t.Errorf("status %s after the timeout, want the run ended (its next step is the fallback)", r.Status)
				}
			}},
		{name: "Fail ends a waiting run with its cause",
			ops: []op{fail}, errs: []error{nil},
			status: pipeline.StatusFailed,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				if !strings.Contains(r.Failure, "the queue gave up") {
					t.Errorf("failure %q does not state the cause", r.Failure)
				}
				if len(e.pres.finished) != 1 {
					t.Errorf("the outcome was shown %d times, want once", len(e.pres.finished))
				}
			}},
		{name: "Fail on a finished run changes nothing",
			ops: []op{cancel, advance, fail}, errs: []error{nil, nil, nil},
			status: pipeline.StatusCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			inst := e.waitingRun(tc.optional)
			if err := e.eng.Advance(ctx, "r-1"); err != nil {
				t.Fatalf("offering the checkpoint: %v", err)
			}
			for i, o := range tc.ops {
				err := o(e, inst)
				want := tc.errs[i]
				switch {
				case want == nil:
					if err != nil {
						t.Fatalf("operation %d: %v", i, err)
					}
				case errors.Is(want, errAny):
					if err == nil {
						t.Fatalf("operation %d succeeded, want an error", i)
					}
				case !errors.Is(err, want):
					t.Fatalf("operation %d: %v, want %v", i, err, want)
				}
			}
			r := e.load()
			if tc.status != "" && r.Status != tc.status {
				t.Errorf("status %s, want %s", r.Status, tc.status)
			}
			if tc.inst != "" {
				if got := r.Instance(inst.ID); got == nil || got.State != tc.inst {
					t.Errorf("checkpoint %+v, want state %s", got, tc.inst)
				}
			}
			if tc.check != nil {
				tc.check(t, e, r)
			}
		})
	}
}

// errAny stands for any error in the table above.
var errAny = errors.New("any error")
