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
			_, rdb := redistest.Start(t)
			ctx := t.Context()
			l := NewRateLimiter(rdb, "search")
			// Load the script, so each call below is one EVALSHA.
			if _, err := l.Allow(ctx, "warm-up", 1, time.Minute); err != nil {
				t.Fatal(err)
			}
			h := &holdFirstRateCall{held: make(chan struct{}), release: make(chan struct{})}
			rdb.AddHook(h)
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
