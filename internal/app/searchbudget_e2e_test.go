package app

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// searxngBudget is the key of the shared search rate budget of SearXNG,
// the harness's one search backend.
const searxngBudget = "rb:rate:search:searxng"

// budgetAsks counts the rate-limit scripts (EVAL, EVALSHA) the client
// sends for one budget's key: one per ask of that budget.
type budgetAsks struct {
	key  string
	runs atomic.Int64
}

func (h *budgetAsks) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *budgetAsks) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); (name == "eval" || name == "evalsha") && slices.Contains(cmd.Args(), any(h.key)) {
			h.runs.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *budgetAsks) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestASearchStepAsksItsBackendsBudgetOnce: an auto run's search step of
// five queries, all sent to SearXNG, takes their five calls from SearXNG's
// shared rate budget in one ask (one rate-limit script), not one per
// query (issue 25), and every query is searched.
func TestASearchStepAsksItsBackendsBudgetOnce(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	asks := &budgetAsks{key: searxngBudget}
	h.app.Conn.Client.AddHook(asks)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s %s)", r.Status, r.FallbackReason, r.Failure)
	}
	if h.web.Searches() != 5 || r.Counters.SearchRound != 1 {
		t.Fatalf("%d searches in %d rounds, want the plan's 5 in one", h.web.Searches(), r.Counters.SearchRound)
	}
	if got := asks.runs.Load(); got != 1 {
		t.Errorf("the search step asked SearXNG's budget %d times for its 5 queries, want once", got)
	}
}

// TestASearchStepWhoseBudgetCannotHoldEveryQuerySearchesEachAsBefore: when
// SearXNG's shared budget has no room for the step's five queries (other
// runs spent it while this one planned), the step's one ask takes nothing
// and each query asks alone, waiting (within the search's wait) for the
// budget to refill: every query is searched, none refused for the others'
// sake.
func TestASearchStepWhoseBudgetCannotHoldEveryQuerySearchesEachAsBefore(t *testing.T) {
	var budget atomic.Pointer[redisstore.RateLimiter]
	spent := make(chan error, 1)
	res := &researchtest.Researcher{Before: func(schema string, _ int) *llmtest.Reply {
		if schema == "research_plan" {
			// Other runs spend the whole 600 calls a minute (app.go); it
			// refills by one call every 100 ms.
			wait, err := budget.Load().AllowN(context.Background(), "searxng", 600, 600, time.Minute)
			if err == nil && wait != 0 {
				err = fmt.Errorf("the budget had no room for 600 calls (wait %v)", wait)
			}
			spent <- err
		}
		return nil
	}}
	h := newHarness(t, res, nil)
	budget.Store(redisstore.NewRateLimiter(h.app.Conn.Client, "search"))
	asks := &budgetAsks{key: searxngBudget}
	h.app.Conn.Client.AddHook(asks)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if err := <-spent; err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s %s)", r.Status, r.FallbackReason, r.Failure)
	}
	if h.web.Searches() != 5 {
		t.Errorf("%d of the 5 queries searched, want all", h.web.Searches())
	}
	for _, q := range r.Queries {
		if len(q.Errors) > 0 {
			t.Errorf("query %q: %q", q.Text, q.Errors)
		}
	}
	if got := asks.runs.Load(); got < 3 {
		t.Errorf("SearXNG's budget asked %d times (the spending included), want it spent, the step's ask refused and then the queries' own asks (3 or more)", got)
	}
}
