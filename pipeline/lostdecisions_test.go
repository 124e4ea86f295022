package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// rollBack makes Redis lose every write to the run after dump was taken
// (as a restore from an older append-only file, or a failover to a
// replica that was behind).
func (f *flow) rollBack(dump string) {
	f.t.Helper()
	if err := f.rdb.RestoreReplace(context.Background(), "rb:run:r-1", 0, dump).Err(); err != nil {
		f.t.Fatal(err)
	}
}

func (f *flow) dump() string {
	f.t.Helper()
	d, err := f.rdb.Dump(context.Background(), "rb:run:r-1").Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *flow) offers() int {
	f.pres.mu.Lock()
	defer f.pres.mu.Unlock()
	return f.pres.offers
}

// TestALostDecisionIsAskedAgain: the plan is approved and the run reaches
// the draft review; Redis then loses everything since the plan was offered.
// A click on the draft review (the lost future) is refused as lost, changes
// nothing but marking the plan review as offered again, and a worker shows
// it again, once however often the loss is reported. An admin may then go
// on without it, and the report says why.
func TestALostDecisionIsAskedAgain(t *testing.T) {
	ctx := context.Background()
	f, _ := newFlow(t, passes)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	plan := f.at(checkpoints.PlanReview)
	before := f.dump()
	f.approve(checkpoints.PlanReview)
	draft := f.at(checkpoints.DraftReview)
	f.rollBack(before)
	shown := f.offers()

	_, err := f.eng.Decide(ctx, draft.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
	if !errors.Is(err, pipeline.ErrCheckpointLost) || !errors.Is(err, pipeline.ErrNotCurrent) {
		t.Fatalf("a decision on the lost draft review: %v, want ErrCheckpointLost (an ErrNotCurrent)", err)
	}
	r := f.run()
	inst := r.Current()
	if r.Waiting != plan.ID || !r.LostAt(inst) || r.Offering != plan.ID || inst.Decision != nil {
		t.Fatalf("after the stale click the run waits at %q (lost mark %+v, offering %q, decision %+v), want the plan review marked to be offered again, undecided",
			r.Waiting, r.LostDecision, r.Offering, inst.Decision)
	}
	version := r.Version
	if _, err := f.eng.OfferLostAgain(ctx, "r-1", "reported again"); err != nil {
		t.Fatal(err)
	}
	if v := f.run().Version; v != version {
		t.Fatalf("a second report of the same loss saved the run again (version %d → %d)", version, v)
	}

	r = f.advance()
	if got := f.offers() - shown; got != 1 || r.Offering != "" || r.Waiting != plan.ID {
		t.Fatalf("the plan review was shown %d times after the loss (offering %q, waiting %q), want once", got, r.Offering, r.Waiting)
	}
	if !strings.Contains(strings.Join(traceTexts(r), "\n"), "offered again") {
		t.Errorf("the trace does not say the checkpoint was offered again: %q", traceTexts(r))
	}

	if _, err := f.eng.ContinueWithout(ctx, plan.ID, "UADMIN"); err != nil {
		t.Fatalf("an admin's continue-without on the checkpoint whose decision was lost: %v", err)
	}
	f.advance()
	f.approve(checkpoints.DraftReview)
	r = f.finished(pipeline.StatusCompleted)
	if !containsAny(r.Report.Caveats, "The decision on the required Research plan checkpoint was lost when the bot's storage was restored; UADMIN, an admin, continued without it.") {
		t.Fatalf("caveats %q", r.Report.Caveats)
	}
}

// TestAClickOnAnUnknownCheckpointOfAFinishedRunIsNotALoss: only a run that
// still waits for people is offered again.
func TestAClickOnAnUnknownCheckpointOfAFinishedRunIsNotALoss(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.start(checkpoints.ModeAuto, pipeline.Limits{}, false)
	f.finished(pipeline.StatusCompleted)
	_, err := f.eng.Decide(context.Background(), "r-1.gone", checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
	if !errors.Is(err, pipeline.ErrNotCurrent) || errors.Is(err, pipeline.ErrCheckpointLost) {
		t.Fatalf("a click on an unknown checkpoint of a finished run: %v, want ErrNotCurrent only", err)
	}
	if r := f.run(); r.LostDecision != nil {
		t.Fatalf("a finished run was marked %+v", r.LostDecision)
	}
}

func traceTexts(r *pipeline.Run) []string {
	var out []string
	for _, e := range r.Trace {
		out = append(out, e.Message)
	}
	return out
}

// TestADecisionLostTwiceIsAskedTwice: the plan review offered again after a
// loss is decided, and Redis loses that decision too (it goes back to the
// version that marked the loss): the plan review is offered again once more.
func TestADecisionLostTwiceIsAskedTwice(t *testing.T) {
	ctx := context.Background()
	f, _ := newFlow(t, passes)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	plan := f.at(checkpoints.PlanReview)
	before := f.dump()
	f.approve(checkpoints.PlanReview)
	f.rollBack(before)
	if _, err := f.eng.OfferLostAgain(ctx, "r-1", "stored version 3, version 9 seen before"); err != nil {
		t.Fatal(err)
	}
	f.advance()
	marked := f.dump()
	f.approve(checkpoints.PlanReview)
	f.at(checkpoints.DraftReview)
	f.rollBack(marked)
	shown := f.offers()
	if _, err := f.eng.OfferLostAgain(ctx, "r-1", "stored version 5, version 12 seen before"); err != nil {
		t.Fatal(err)
	}
	r := f.advance()
	if got := f.offers() - shown; got != 1 || r.Waiting != plan.ID || !r.LostAt(r.Current()) {
		t.Fatalf("after the second loss the plan review was shown %d times (waiting %q, mark %+v), want once more", got, r.Waiting, r.LostDecision)
	}
}
