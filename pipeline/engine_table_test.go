package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestEngineOperationsOnAWaitingRun drives Decide, Cancel, Fail and
// Advance (a worker's, also when the checkpoint's deadline came), one
// after another, on a run waiting at a checkpoint
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
	// timeout is the worker that the deadline's timer sends, after
	// (from now): it advances the run.
	timeout := func(after time.Duration) op {
		return func(e *env, _ checkpoints.Instance) error {
			e.clock.Advance(after)
			return e.eng.Advance(ctx, "r-1")
		}
	}
	// early is a worker that advances the run a second before its deadline.
	early := func(e *env, _ checkpoints.Instance) error {
		e.clock.Advance(e.load().Deadline().Sub(e.clock.Now()) - time.Second)
		return e.eng.Advance(ctx, "r-1")
	}
	fail := func(e *env, _ checkpoints.Instance) error {
		return e.eng.Fail(ctx, "r-1", errors.New("the queue gave up"))
	}
	setOfferErr := func(err error) op {
		return func(e *env, _ checkpoints.Instance) error {
			e.pres.mu.Lock()
			defer e.pres.mu.Unlock()
			e.pres.offerErr = err
			return nil
		}
	}
	offers := func(e *env) int {
		e.pres.mu.Lock()
		defer e.pres.mu.Unlock()
		return e.pres.offers
	}
	for _, tc := range []struct {
		name     string
		optional bool
		store    func(*faultyStore) // faults of the store, after the checkpoint is offered
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
		{name: "an advance before the deadline changes nothing, and the deadline stays saved with the run",
			ops: []op{early}, errs: []error{nil},
			status: pipeline.StatusWaiting, inst: checkpoints.StateOffered,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				d := e.queue.deadlines
				if len(d) != 1 {
					t.Fatalf("deadlines announced %v, want one, on offering", d)
				}
				if n := offers(e); n != 1 || !r.Deadline().Equal(d[0]) {
					t.Errorf("%d offers, run deadline %v; want the one offer and the deadline %v kept (the store indexes it)", n, r.Deadline(), d[0])
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
		{name: "a second cancellation is told the run has finished",
			ops: []op{cancel, advance, cancel}, errs: []error{nil, nil, pipeline.ErrRunFinished},
			status: pipeline.StatusCancelled},
		{name: "a decision that loses a race to another writer is applied on the fresh run, keeping the other write",
			store: func(fs *faultyStore) {
				raced := false
				fs.save = func(ctx context.Context, r *pipeline.Run, write func() error) error {
					if !raced {
						raced = true // meanwhile a person opens the checkpoint's form
						other, err := fs.Store.Load(ctx, r.ID)
						if err != nil {
							return err
						}
						if err := other.Checkpoints[0].Activate(t0, "U1"); err != nil {
							return err
						}
						if err := fs.Store.Save(ctx, other); err != nil {
							return err
						}
					}
					return write()
				}
			},
			ops: []op{decide(approve)}, errs: []error{nil},
			status: pipeline.StatusWaiting, inst: checkpoints.StateSubmitted,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				opened := false
				for _, a := range r.Checkpoints[0].Audit {
					opened = opened || a.To == checkpoints.StateActive
				}
				if !opened {
					t.Errorf("the other writer's change was overwritten: audit %+v", r.Checkpoints[0].Audit)
				}
				if len(e.queue.woken()) != 1 {
					t.Errorf("wake-ups %v, want one", e.queue.woken())
				}
			}},
		{name: "a required checkpoint's timeout re-offers it once, then it waits timed out and is reminded after a backed-off interval; a late decision still counts",
			ops:  []op{timeout(time.Hour), timeout(2 * time.Hour), decide(approve)},
			errs: []error{nil, nil, nil},
			inst: checkpoints.StateSubmitted,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				inst := r.Checkpoints[0]
				if inst.Attempt != 4 {
					t.Errorf("attempt %d, want 4 (the offer, its re-offer, a reminder of the timed-out one, reopened by the late decision)", inst.Attempt)
				}
				if n := offers(e); n != 3 {
					t.Errorf("%d offers, want 3: the offer, its re-offer, and the reminder of the timed-out one", n)
				}
				timedOut := false
				for _, a := range inst.Audit {
					timedOut = timedOut || a.To == checkpoints.StateTimedOut
				}
				if !timedOut || inst.Decision == nil || inst.Decision.Action != checkpoints.Approve {
					t.Errorf("audit %+v decision %+v: want a timeout, then the approval", inst.Audit, inst.Decision)
				}
			}},
		{name: "a reminder the presenter cannot show fails with its cause; its retries used up, the required checkpoint waits stranded for a person",
			ops:    []op{setOfferErr(errors.New("slack: channel_not_found")), timeout(time.Hour), setOfferErr(nil), advance},
			errs:   []error{nil, errAny, nil, nil},
			status: pipeline.StatusWaiting, inst: checkpoints.StateFailed,
			check: func(t *testing.T, e *env, r *pipeline.Run) {
				if r.Stranded != r.Checkpoints[0].ID {
					t.Errorf("stranded %q, want the checkpoint", r.Stranded)
				}
				said := false
				for _, x := range r.Errors {
					said = said || strings.Contains(x.Message, "channel_not_found")
				}
				if !said {
					t.Errorf("errors %+v do not say why the checkpoint could not be shown", r.Errors)
				}
				if n := offers(e); n != 2 {
					t.Errorf("%d offers, want 2: the first and the failed reminder, nothing after", n)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs *faultyStore
			e := newEnv(t, func(s pipeline.Store) pipeline.Store { fs = &faultyStore{Store: s}; return fs })
			inst := e.waitingRun(tc.optional)
			if err := e.eng.Advance(ctx, "r-1"); err != nil {
				t.Fatalf("offering the checkpoint: %v", err)
			}
			if tc.store != nil {
				tc.store(fs)
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

// TestAnUnusableModelEndsTheRunAtOnce: a model failure that retrying cannot
// fix (a refusal, a rejected key) ends the run on its first attempt, saying
// so, and the outcome is shown.
func TestAnUnusableModelEndsTheRunAtOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	e.model.err = fmt.Errorf("the model rejected the API key: %w", pipeline.ErrModelUnusable)
	r, err := e.eng.Start(ctx, pipeline.Request{Question: "How do heat pumps cope with frost?", Mode: checkpoints.ModeAuto,
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.eng.Advance(ctx, r.ID); err != nil {
		t.Fatalf("advance: %v, want the run ended without a retry", err)
	}
	got := e.load()
	if got.Status != pipeline.StatusFailed || !strings.Contains(got.Failure, "the model could not do the plan step") ||
		!strings.Contains(got.Failure, "rejected the API key") {
		t.Fatalf("status %s, failure %q; want failed, saying the model could not plan and why", got.Status, got.Failure)
	}
	if e.model.calls != 1 || len(e.pres.finished) != 1 || !got.Presented {
		t.Fatalf("%d model calls, %d outcomes shown (presented %v); want one of each", e.model.calls, len(e.pres.finished), got.Presented)
	}
}
