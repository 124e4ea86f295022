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
