package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestWatchFollowsARunWhoeverSavesIt: Watch sends the run as it is, then
// each new version saved by anyone, and ends with its context.
func TestWatchFollowsARunWhoeverSavesIt(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	other := NewStore(rdb, "") // another process
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	runs := s.Watch(ctx, "r-1", 10*time.Millisecond)
	next := func() *pipeline.Run {
		t.Helper()
		select {
		case r := <-runs:
			return r
		case <-time.After(5 * time.Second):
			t.Fatal("no run from Watch")
		}
		return nil
	}
	if r := next(); r.Version != 1 {
		t.Fatalf("first sent version %d", r.Version)
	}
	r, _ := other.Load(ctx, "r-1")
	r.Status = pipeline.StatusCompleted
	if err := other.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Version != 2 || r.Status != pipeline.StatusCompleted {
		t.Fatalf("then version %d %s", r.Version, r.Status)
	}
	cancel()
	for range runs { // closes with its context
	}
}
