package pipeline_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// reservingWeb is web{} as a pipeline.SearchReserver: it records each
// Reserve's requests, and which searches went through what it returned.
type reservingWeb struct {
	web
	mu       sync.Mutex
	reserved [][]string // the texts of each Reserve's requests
	direct   int        // searches asked of reservingWeb itself
	through  []string   // the texts searched through a reservation
}

func (w *reservingWeb) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	w.mu.Lock()
	w.direct++
	w.mu.Unlock()
	return w.web.Search(ctx, q)
}

func (w *reservingWeb) Reserve(_ context.Context, rs []pipeline.SearchRequest) pipeline.Searcher {
	var texts []string
	for _, r := range rs {
		texts = append(texts, r.Text)
	}
	w.mu.Lock()
	w.reserved = append(w.reserved, texts)
	w.mu.Unlock()
	return reservation{w}
}

// reservation is what reservingWeb.Reserve returns.
type reservation struct{ w *reservingWeb }

func (r reservation) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	r.w.mu.Lock()
	r.w.through = append(r.w.through, q.Text)
	r.w.mu.Unlock()
	return r.w.web.Search(ctx, q)
}

// TestASearchStepReservesForAllItsQueriesAtOnce: a Searcher that reserves
// (pipeline.SearchReserver) is told every request of a search step at once,
// before any is made, and the step makes each of them, once, through what
// Reserve returned (so their shared rate budgets are asked once per step,
// issue 25).
func TestASearchStepReservesForAllItsQueriesAtOnce(t *testing.T) {
	ctx := context.Background()
	w := &reservingWeb{}
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{reviews: []pipeline.CritiqueOutput{passes}}, Searcher: w, Fetcher: w,
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	}); err != nil {
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
	var searched []string
	for _, q := range r.Queries {
		searched = append(searched, q.Text)
	}
	if len(searched) < 2 || len(w.reserved) != 1 || !slices.Equal(w.reserved[0], searched) {
		t.Fatalf("reserved %q for a run that searched %q, want one reservation of every query", w.reserved, searched)
	}
	slices.Sort(searched)
	slices.Sort(w.through)
	if w.direct != 0 || !slices.Equal(w.through, searched) {
		t.Errorf("%d searches asked directly, %q through the reservation; want none and each query once (%q)", w.direct, w.through, searched)
	}
}
