package scheduler_test

import (
	"context"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// escalatingInner is an inner presenter that acts on stopped reminders.
type escalatingInner struct {
	innerRecorder
	stopped []string
}

func (p *escalatingInner) RemindersStopped(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	p.stopped = append(p.stopped, inst.ID)
	return nil
}

// A held digest checkpoint's reminders that run out reach the inner
// presenter (the owner's DM, the admins); without one that acts on it,
// nothing happens and nothing fails.
func TestDigestPresenterPassesStoppedRemindersOn(t *testing.T) {
	ctx := context.Background()
	inner := &escalatingInner{}
	var p pipeline.Presenter = scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Inner: inner})
	if err := p.RemindersStopped(ctx, &pipeline.Run{ID: "r-1"}, &checkpoints.Instance{ID: "r-1.cp1"}); err != nil || len(inner.stopped) != 1 {
		t.Fatalf("err %v, inner got %v", err, inner.stopped)
	}
	plain := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Inner: &innerRecorder{}})
	if err := plain.RemindersStopped(ctx, &pipeline.Run{ID: "r-1"}, &checkpoints.Instance{ID: "r-1.cp1"}); err != nil {
		t.Fatal(err)
	}
}

// alertingInner is an inner presenter that records stranded checkpoints
// and tripped breakers.
type alertingInner struct {
	innerRecorder
	stranded []string
	tripped  []string
}

func (p *alertingInner) Stranded(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	p.stranded = append(p.stranded, inst.ID)
	return nil
}

func (p *alertingInner) BreakerTripped(_ context.Context, d checkpoints.Definition, _ int) error {
	p.tripped = append(p.tripped, d.ID)
	return nil
}

// A held digest's checkpoint that could not be shown, and a breaker that
// tripped on a digest, reach the inner presenter (the owner is offered Skip
// and Retry; the admins are alerted) instead of being dropped; without an
// inner presenter nothing fails.
func TestDigestPresenterPassesStrandedAndBreakerAlertsOn(t *testing.T) {
	ctx := context.Background()
	inner := &alertingInner{}
	var p pipeline.Presenter = scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Inner: inner})
	if err := p.Stranded(ctx, &pipeline.Run{ID: "r-1"}, &checkpoints.Instance{ID: "r-1.cp1"}); err != nil || len(inner.stranded) != 1 {
		t.Fatalf("Stranded: err %v, inner got %v", err, inner.stranded)
	}
	if err := p.BreakerTripped(ctx, checkpoints.Definition{ID: checkpoints.DraftReview}, 5); err != nil || len(inner.tripped) != 1 {
		t.Fatalf("BreakerTripped: err %v, inner got %v", err, inner.tripped)
	}
	none := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{})
	if err := none.Stranded(ctx, &pipeline.Run{ID: "r-1"}, &checkpoints.Instance{ID: "r-1.cp1"}); err != nil {
		t.Fatal(err)
	}
	if err := none.BreakerTripped(ctx, checkpoints.Definition{ID: checkpoints.DraftReview}, 5); err != nil {
		t.Fatal(err)
	}
}
