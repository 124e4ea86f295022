package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/search"
)

// TestReservedSearchesSayWhatTheySaidBefore: searches made through a
// reservation (pipeline.SearchReserver, as the search step makes them)
// report our limiter's failure as an interruption and a budget with no
// room as Paced, exactly as searches made without one; searchers joined
// with one that reserves are asked as they were, and the joined outcome
// keeps both.
func TestReservedSearchesSayWhatTheySaidBefore(t *testing.T) {
	ctx := context.Background()
	req := pipeline.SearchRequest{Text: "heat pumps in the cold", Kind: "web"}
	reqs := []pipeline.SearchRequest{req, req, req}

	_, down := redistest.Start(t)
	b := &countingBackend{}
	adapter := adapterOver(b, redisstore.NewRateLimiter(down, "search"))
	_ = down.Close()
	joined := joinSearchers(adapter, []pipeline.Searcher{stubSearcher{Notes: []string{"workspace: skipped"}}})
	reserved := joined.(pipeline.SearchReserver).Reserve(ctx, reqs)
	for range reqs {
		out := reserved.Search(ctx, req)
		if !errors.Is(out.Interrupted, search.ErrLimiterFailed) || len(out.Notes) != 1 {
			t.Errorf("limiter down, through a reservation: interrupted %v, notes %q; want ErrLimiterFailed and the other searcher's note", out.Interrupted, out.Notes)
		}
	}
	if b.calls.Load() != 0 {
		t.Errorf("backend called %d times with its limiter down", b.calls.Load())
	}

	_, rdb := redistest.Start(t)
	budget := redisstore.NewRateLimiter(rdb, "search")
	if wait, err := budget.AllowN(ctx, "searxng", 600, 600, time.Minute); err != nil || wait != 0 {
		t.Fatalf("spending the budget: wait %v (%v)", wait, err)
	}
	b = &countingBackend{}
	reserved = adapterOver(b, budget).Reserve(ctx, reqs)
	out := reserved.Search(ctx, req)
	if !errors.Is(out.Paced, search.ErrBudgetSpent) || out.Interrupted != nil || b.calls.Load() != 0 {
		t.Errorf("budget spent, through a reservation: paced %v, interrupted %v, %d backend calls; want ErrBudgetSpent and no call", out.Paced, out.Interrupted, b.calls.Load())
	}
}
