package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// flaky is a presenter whose Offer fails while broken is set; it reports
// checkpoints that could not be shown after their retries on stranded.
type flaky struct {
	*recorder
	broken   atomic.Bool
	fails    atomic.Int32
	stranded chan checkpoints.Instance
	trips    chan string // "definition failures" of each BreakerTripped
}

func (f *flaky) BreakerTripped(_ context.Context, d checkpoints.Definition, failures int) error {
	select {
	case f.trips <- fmt.Sprintf("%s %d", d.ID, failures):
	default:
	}
	return nil
}

func (f *flaky) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	if f.broken.Load() {
		f.fails.Add(1)
		return errors.New("slack is down")
	}
	return f.recorder.Offer(ctx, r, inst)
}

func (f *flaky) Stranded(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	f.stranded <- *inst
	return nil
}

func (f *flaky) waitStranded(t *testing.T) checkpoints.Instance {
	t.Helper()
	select {
	case inst := <-f.stranded:
		return inst
	case <-time.After(waitLimit):
		t.Fatal("no checkpoint reported as not shown in time")
	}
	return checkpoints.Instance{}
}

func TestCheckpointRetriesAndCircuitBreaker(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	f := &flaky{recorder: h.rec, stranded: make(chan checkpoints.Instance, 4), trips: make(chan string, 16)}
	f.broken.Store(true)
	h.app.AddPresenter("test", f)
	ctx := context.Background()

	// A required checkpoint that cannot be shown is retried, then the run
	// waits for a person's Retry or an admin's "continue without it",
	// and says so: never silence, never a run failed for a Slack outage.
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	inst := f.waitStranded(t)
	if got := f.fails.Load(); got != 4 {
		t.Fatalf("%d attempts to show it, want 4 (1 + MaxRetries 3)", got)
	}
	if _, err := h.app.Engine.Skip(ctx, inst.ID, "U1"); !errors.Is(err, checkpoints.ErrCannotSkipRequired) {
		t.Fatalf("skipping a required checkpoint: %v", err)
	}
	f.broken.Store(false)
	if _, err := h.app.Engine.ContinueWithout(ctx, inst.ID, "UADMIN"); err != nil {
		t.Fatal(err)
	}
	h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve}) // the draft review
	r := h.finish()
	if r.Status != pipeline.StatusCompleted || !containsAny(r.Report.Caveats, "UADMIN, an admin, continued without it") {
		t.Fatalf("status %s, caveats %q", r.Status, r.Report.Caveats)
	}

	if len(f.trips) != 0 {
		t.Fatalf("an alert before the breaker tripped: %s", <-f.trips)
	}
	// One more failure trips the breaker (5 in an hour): the presenter is
	// told, so it can alert the admins; the definition is then left out,
	// and runs go on without it.
	f.broken.Store(true)
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	f.waitStranded(t)
	select {
	case got := <-f.trips:
		if got != "plan_review 5" {
			t.Fatalf("the trip was reported as %q, want the plan review at 5 failures", got)
		}
	case <-time.After(waitLimit):
		t.Fatal("the tripped breaker was not reported")
	}
	f.broken.Store(false)
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	first := h.next()
	if first.DefinitionID == checkpoints.PlanReview {
		t.Fatal("the plan review was offered although its breaker tripped")
	}
	if first.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("got %s", first.DefinitionID)
	}
	h.decide(first, checkpoints.Decision{Action: checkpoints.Approve})
	if r := h.finish(); r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
}

// failFirstFinish is a presenter whose first Finished fails (Slack down when
// the report is ready).
type failFirstFinish struct {
	*recorder
	calls atomic.Int32
}

func (f *failFirstFinish) Finished(ctx context.Context, r *pipeline.Run) error {
	if f.calls.Add(1) == 1 {
		return errors.New("slack is down")
	}
	return f.recorder.Finished(ctx, r)
}

func TestAReportThatCouldNotBeShownIsShownLater(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	f := &failFirstFinish{recorder: h.rec}
	h.app.AddPresenter("test", f)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted || r.Report == nil {
		t.Fatalf("status %s", r.Status)
	}
	if got := f.calls.Load(); got != 2 {
		t.Fatalf("Finished called %d times, want 2 (a failure, then the retry)", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		stored, err := h.app.Engine.Load(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Presented {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run was never marked as presented")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case again := <-h.rec.done:
		t.Fatalf("the report was shown twice (%s)", again.ID)
	case <-time.After(1500 * time.Millisecond):
	}
}

// neverFinish is a presenter that can never show a report.
type neverFinish struct {
	*recorder
	calls atomic.Int32
}

func (n *neverFinish) Finished(context.Context, *pipeline.Run) error {
	n.calls.Add(1)
	return errors.New("not_in_channel")
}

func TestShowingAReportIsNotRetriedForever(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, map[string]string{"RUN_LEASE": "1s"})
	n := &neverFinish{recorder: h.rec}
	h.app.AddPresenter("test", n)
	r := h.start(checkpoints.ModeAuto, pipeline.Limits{})
	deadline := time.Now().Add(60 * time.Second)
	for {
		stored, err := h.app.Engine.Load(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Presented {
			if stored.PresentAttempts != 8 || stored.Report == nil {
				t.Fatalf("gave up after %d attempts (report %v)", stored.PresentAttempts, stored.Report != nil)
			}
			if !strings.Contains(stored.Errors[len(stored.Errors)-1].Message, "not_in_channel") {
				t.Errorf("the reason is not recorded: %+v", stored.Errors[len(stored.Errors)-1])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still trying after %d attempts", n.calls.Load())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
