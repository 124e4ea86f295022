package pipeline_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
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
	w := &reservingWeb{}
	r := runAuto(t, &scripted{reviews: []pipeline.CritiqueOutput{passes}}, w)
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
