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

// theWeb is what a test's fake web is to the engine: its search and its
// pages.
type theWeb interface {
	pipeline.Searcher
	pipeline.Fetcher
}

// runAuto runs one auto-mode research, "r-1", on a real Redis with model m
// and the web w, to its end in one Advance, and returns the run as stored;
// it fails the test unless the run completed. Each adjust changes the
// request before it starts (its domain rules, say).
func runAuto(t *testing.T, m pipeline.Model, w theWeb, adjust ...func(*pipeline.Request)) *pipeline.Run {
	t.Helper()
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: m, Searcher: w, Fetcher: w,
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	req := pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	}
	for _, a := range adjust {
		a(&req)
	}
	if _, err := eng.Start(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("run %s at %s (%s), want completed", r.Status, r.Step, r.FallbackReason)
	}
	return r
}
