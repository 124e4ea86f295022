package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
)

// holdFirstRateCall counts the rate scripts sent (EVALSHA) and holds the
// first one until release is closed, telling held when it does.
type holdFirstRateCall struct {
	calls   atomic.Int64
	held    chan struct{}
	release chan struct{}
}

func (h *holdFirstRateCall) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdFirstRateCall) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" && h.calls.Add(1) == 1 {
			close(h.held)
			<-h.release
		}
		return next(ctx, cmd)
	}
}

func (h *holdFirstRateCall) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// heldRateLimiter is a search RateLimiter on a fresh Redis whose script is
// loaded already (each call is one EVALSHA), with h holding its next call.
func heldRateLimiter(t *testing.T) (*RateLimiter, *holdFirstRateCall) {
	t.Helper()
	_, rdb := redistest.Start(t)
	l := NewRateLimiter(rdb, "search")
	if _, err := l.Allow(t.Context(), "warm-up", 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	h := &holdFirstRateCall{held: make(chan struct{}), release: make(chan struct{})}
	rdb.AddHook(h)
	return l, h
}

// TestRateCallsThatMeetTakeTheirEventsTogether: callers of one budget that
// arrive while a call is on its way to Redis take their events in one call
// after it — five searches at once are two calls, not five — and every
// event is taken: the budget is spent exactly as by five calls. A batch
// that does not fit in what is left asks again one by one, so exactly the
// budget is allowed, no more and no fewer.
func TestRateCallsThatMeetTakeTheirEventsTogether(t *testing.T) {
	for _, tc := range []struct {
		name           string
		budget         int
		callers        int
		allowed, calls int64
	}{
		{name: "the batch fits", budget: 5, callers: 5, allowed: 5, calls: 2},
		{name: "the batch does not fit", budget: 3, callers: 5, allowed: 3, calls: 2 + 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			l, h := heldRateLimiter(t)
			var allowed atomic.Int64
			var wg sync.WaitGroup
			ask := func() {
				defer wg.Done()
				wait, err := l.Allow(ctx, "searxng", tc.budget, time.Minute)
				if err != nil {
					t.Error(err)
				}
				if wait == 0 {
					allowed.Add(1)
				}
			}
			wg.Add(tc.callers)
			go ask()
			<-h.held
			for range tc.callers - 1 {
				go ask()
			}
			name := rateBudgetName("search", "searxng", tc.budget, time.Minute)
			waitFor(t, "the callers to gather behind the first call", func() bool { return l.batches.waiting(name) == tc.callers-1 })
			close(h.release)
			wg.Wait()
			if got := allowed.Load(); got != tc.allowed {
				t.Errorf("%d of %d callers allowed with a budget of %d, want %d", got, tc.callers, tc.budget, tc.allowed)
			}
			if got := h.calls.Load(); got != tc.calls {
				t.Errorf("%d calls to Redis for %d callers, want %d", got, tc.callers, tc.calls)
			}
			if wait, err := l.Allow(ctx, "searxng", tc.budget, time.Minute); err != nil || wait == 0 {
				t.Errorf("one more event after the budget was spent: wait %v (%v), want a wait", wait, err)
			}
		})
	}
}

// TestARateScriptsFirstRunIsOneCommand: on a server that has not seen
// redis_rate's script, the first call sends it whole (EVAL) instead of an
// EVALSHA that fails first; later calls send EVALSHA, and a server that
// lost its scripts (SCRIPT FLUSH, a restart) is sent the script again.
func TestARateScriptsFirstRunIsOneCommand(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := t.Context()
	calls := func() (evals, evalshas int) {
		t.Helper()
		evals, evalshas, _ = scriptCalls(t, rdb)
		return evals, evalshas
	}
	l := NewRateLimiter(rdb, "search")
	allow := func() {
		t.Helper()
		if wait, err := l.Allow(ctx, "searxng", 100, time.Minute); err != nil || wait != 0 {
			t.Fatalf("Allow = %v, %v; want allowed", wait, err)
		}
	}
	allow()
	if e, es := calls(); e != 1 || es != 0 {
		t.Errorf("the first call sent %d EVAL and %d EVALSHA, want one EVAL alone", e, es)
	}
	allow()
	if e, es := calls(); e != 1 || es != 1 {
		t.Errorf("after the second call: %d EVAL and %d EVALSHA, want 1 and 1", e, es)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	allow()
	if e, es := calls(); e != 2 || es != 2 {
		t.Errorf("after a call on a server without the script: %d EVAL and %d EVALSHA, want 2 and 2 (EVALSHA refused, then EVAL)", e, es)
	}
}

// TestAllowNTakesAllItsEventsOrNone: AllowN takes its events in one call,
// all of them or none: a request that does not fit takes nothing, says how
// long to wait, and leaves the rest for a smaller one; a request larger
// than the whole budget is refused without asking Redis.
func TestAllowNTakesAllItsEventsOrNone(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := t.Context()
	l := NewRateLimiter(rdb, "search")
	scripts := func() int {
		t.Helper()
		evals, evalshas, _ := scriptCalls(t, rdb)
		return evals + evalshas
	}
	if wait, err := l.AllowN(ctx, "searxng", 3, 5, time.Minute); err != nil || wait != 0 {
		t.Fatalf("3 events of an unused budget of 5: wait %v (%v), want taken", wait, err)
	}
	if got := scripts(); got != 1 {
		t.Errorf("3 events took %d script runs, want 1", got)
	}
	if wait, err := l.AllowN(ctx, "searxng", 3, 5, time.Minute); err != nil || wait <= 0 {
		t.Fatalf("3 more events with 2 left: wait %v (%v), want refused with a wait", wait, err)
	}
	if wait, err := l.AllowN(ctx, "searxng", 2, 5, time.Minute); err != nil || wait != 0 {
		t.Fatalf("the 2 events left after a refusal: wait %v (%v), want taken (the refusal took none)", wait, err)
	}
	if wait, err := l.Allow(ctx, "searxng", 5, time.Minute); err != nil || wait <= 0 {
		t.Fatalf("one event after the budget was spent: wait %v (%v), want refused", wait, err)
	}
	before := scripts()
	if wait, err := l.AllowN(ctx, "brave", 6, 5, time.Minute); err != nil || wait != time.Minute {
		t.Errorf("6 events of a budget of 5: wait %v (%v), want refused with a wait of the period", wait, err)
	}
	if got := scripts() - before; got != 0 {
		t.Errorf("more events than the budget holds sent %d script runs, want none", got)
	}
}

// TestAllowNJoinsTheBatchOfItsBudget: a call for several events that
// arrives while another call for the budget is on its way to Redis goes in
// the next batch with the other callers, its events counted as many; when
// that batch does not fit, it asks alone for its own events, all or none,
// and the single-event callers still get what is left.
func TestAllowNJoinsTheBatchOfItsBudget(t *testing.T) {
	for _, tc := range []struct {
		name        string
		budget      int
		manyAllowed bool
		oneAllowed  int64
		calls       int64
	}{
		{name: "the batch fits", budget: 1 + 4 + 2, manyAllowed: true, oneAllowed: 3, calls: 2},
		{name: "the batch does not fit", budget: 4, manyAllowed: false, oneAllowed: 3, calls: 2 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			l, h := heldRateLimiter(t)
			var oneAllowed atomic.Int64
			var manyAllowed atomic.Bool
			var wg sync.WaitGroup
			one := func() {
				defer wg.Done()
				wait, err := l.Allow(ctx, "searxng", tc.budget, time.Minute)
				if err != nil {
					t.Error(err)
				}
				if wait == 0 {
					oneAllowed.Add(1)
				}
			}
			wg.Add(4)
			go one()
			<-h.held
			go one()
			go one()
			go func() {
				defer wg.Done()
				wait, err := l.AllowN(ctx, "searxng", 4, tc.budget, time.Minute)
				if err != nil {
					t.Error(err)
				}
				manyAllowed.Store(wait == 0)
			}()
			name := rateBudgetName("search", "searxng", tc.budget, time.Minute)
			waitFor(t, "the callers to gather behind the first call", func() bool { return l.batches.waiting(name) == 3 })
			close(h.release)
			wg.Wait()
			if manyAllowed.Load() != tc.manyAllowed || oneAllowed.Load() != tc.oneAllowed {
				t.Errorf("budget %d: the 4 events taken %v, %d single events taken; want %v and %d", tc.budget, manyAllowed.Load(), oneAllowed.Load(), tc.manyAllowed, tc.oneAllowed)
			}
			if got := h.calls.Load(); got != tc.calls {
				t.Errorf("%d calls to Redis, want %d", got, tc.calls)
			}
		})
	}
}
