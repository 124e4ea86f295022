package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// flaky is a presenter whose Offer fails while broken is set.
type flaky struct {
	*recorder
	broken atomic.Bool
	fails  atomic.Int32
}

func (f *flaky) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	if f.broken.Load() {
		f.fails.Add(1)
		return errors.New("slack is down")
	}
	return f.recorder.Offer(ctx, r, inst)
}

func TestCheckpointRetriesAndCircuitBreaker(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	f := &flaky{recorder: h.rec}
	f.broken.Store(true)
	h.app.AddPresenter("test", f)

	// A required checkpoint that cannot be shown is retried, then the run
	// fails with a clear reason: never silence.
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "could not be shown after 4 attempts") {
		t.Fatalf("status %s, failure %q", r.Status, r.Failure)
	}
	if got := f.fails.Load(); got != 4 {
		t.Fatalf("%d attempts to show it, want 4 (1 + MaxRetries 3)", got)
	}

	// One more failure trips the breaker (5 in an hour): the definition is
	// then left out, and runs go on without it.
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	if r := h.finish(); r.Status != pipeline.StatusFailed {
		t.Fatalf("second run: %s", r.Status)
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
