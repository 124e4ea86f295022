package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestVerdictsOnReportAndAnswers: a person has one verdict on the report
// and one on each answered follow-up; each replaces only its own, a reason
// kept with the same verdict, and the tally counts the report's only. A
// verdict on a follow-up the run has not answered is refused.
func TestVerdictsOnReportAndAnswers(t *testing.T) {
	eng, _, store := finishedRun(t)
	ctx := context.Background()
	r, err := store.Load(ctx, "r-parent")
	if err != nil {
		t.Fatal(err)
	}
	r.FollowUps = []pipeline.FollowUp{{ID: "r-parent.f1", Answered: true}, {ID: "r-parent.f2"}}
	if err := store.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	record := func(v pipeline.Verdict) *pipeline.Run {
		t.Helper()
		r, err := eng.RecordVerdict(ctx, "r-parent", v)
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		return r
	}
	record(pipeline.Verdict{By: "U1", Useful: true})
	record(pipeline.Verdict{By: "U1", Useful: false, On: "r-parent.f1", Reason: "ignored [2]"})
	record(pipeline.Verdict{By: "U1", Useful: false, On: "r-parent.f1"}) // the same verdict again keeps the reason
	got := record(pipeline.Verdict{By: "U2", Useful: false})
	if len(got.Verdicts) != 3 {
		t.Fatalf("verdicts %+v", got.Verdicts)
	}
	if v := got.Verdicts[1]; v.On != "r-parent.f1" || v.Useful || v.Reason != "ignored [2]" {
		t.Errorf("answer verdict %+v", v)
	}
	if up, down := got.VerdictTally(); up != 1 || down != 1 {
		t.Errorf("report tally %d/%d, want 1/1 (the answer's verdict not counted)", up, down)
	}
	got = record(pipeline.Verdict{By: "U1", Useful: false})
	if up, down := got.VerdictTally(); up != 0 || down != 2 || len(got.Verdicts) != 3 || got.Verdicts[0].Useful || got.Verdicts[0].On != "" {
		t.Errorf("the changed report verdict: %d/%d %+v", up, down, got.Verdicts)
	}
	if v := got.Verdicts[1]; v.On != "r-parent.f1" || v.Reason != "ignored [2]" {
		t.Errorf("changing the report verdict touched the answer's: %+v", got.Verdicts)
	}
	for _, on := range []string{"r-parent.f2", "r-parent.f9"} {
		if _, err := eng.RecordVerdict(ctx, "r-parent", pipeline.Verdict{By: "U1", Useful: true, On: on}); !errors.Is(err, pipeline.ErrNoAnswer) {
			t.Errorf("verdict on %s: %v, want ErrNoAnswer", on, err)
		}
	}
}
