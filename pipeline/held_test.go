package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestAHeldRunWaitsForItsReleaseAndIsMadeOnce: a run started held (a Slack
// request stored before its root message is posted) is stored under the id
// its request chose, is not woken nor advanced until Release gives it its
// thread; a second Start with that id makes no second run; Release twice
// changes nothing the second time; Withdraw ends a held run with nothing to
// show.
func TestAHeldRunWaitsForItsReleaseAndIsMadeOnce(t *testing.T) {
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	q := &queue{}
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: q, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{reviews: []pipeline.CritiqueOutput{passes}}, Searcher: web{}, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
	})
	if err != nil {
		t.Fatal(err)
	}
	req := pipeline.Request{ID: "r-held", Held: true, Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto,
		RequestedBy: "U1", Origin: pipeline.Origin{Kind: "test", Queue: "runs", Channel: "C1"}}
	r, err := eng.Start(ctx, req)
	if err != nil || r.ID != "r-held" || !r.Held || r.Status != pipeline.StatusInterrupted {
		t.Fatalf("held start: %+v, %v", r, err)
	}
	if _, err := eng.Start(ctx, req); err == nil {
		t.Error("a second start with the same id made a run")
	}
	if err := eng.Advance(ctx, "r-held"); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Load(ctx, "r-held"); got.Step != pipeline.StepPlan || got.Status != pipeline.StatusInterrupted || len(q.wakes) != 0 {
		t.Fatalf("held run advanced or woken: step %s status %s wakes %v", got.Step, got.Status, q.wakes)
	}
	rel, err := eng.Release(ctx, "r-held", "1700000000.000100")
	if err != nil || rel.Held || rel.Status != pipeline.StatusQueued || rel.Origin.ThreadTS != "1700000000.000100" || len(q.wakes) != 1 {
		t.Fatalf("release: %+v, %v, wakes %v", rel, err, q.wakes)
	}
	again, err := eng.Release(ctx, "r-held", "1700000000.000999")
	if err != nil || again.Origin.ThreadTS != "1700000000.000100" || len(q.wakes) != 1 {
		t.Errorf("a second release changed the run: %+v, %v, wakes %v", again, err, q.wakes)
	}
	if err := eng.Withdraw(ctx, "r-held", "too late"); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Load(ctx, "r-held"); got.Status == pipeline.StatusCancelled {
		t.Error("withdraw cancelled a released run")
	}

	req.ID = "r-withdrawn"
	if _, err := eng.Start(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := eng.Withdraw(ctx, "r-withdrawn", "its root message could not be posted"); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Load(ctx, "r-withdrawn"); got.Held || got.Status != pipeline.StatusCancelled || !got.Presented || got.NeedsWorker() {
		t.Errorf("withdrawn run: held %v status %s presented %v", got.Held, got.Status, got.Presented)
	}
}
