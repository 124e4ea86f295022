package llm_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/redisstore"
)

func TestSharedLimiterPaces(t *testing.T) {
	_, rdb := redistest.Start(t)
	const perMinute = 60 // a burst of 60, then one per second
	lim := llm.NewSharedLimiter(redisstore.NewRateLimiter(rdb, "llm"), "pace", perMinute, quartz.NewReal())
	ctx := context.Background()
	start := time.Now()
	for i := range perMinute {
		if err := lim.Wait(ctx); err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
	}
	burst := time.Since(start)
	if err := lim.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	// GCRA: the 61st request is allowed one emission interval (1s) after the
	// first, however fast the burst went.
	if total := time.Since(start); total < 900*time.Millisecond || total > 3*time.Second {
		t.Errorf("%d waits took %v (burst %v), want about 1s", perMinute+1, total, burst)
	}
}

func TestSharedLimiterSharedAcrossReplicas(t *testing.T) {
	_, rdb := redistest.Start(t)
	a := llm.NewSharedLimiter(redisstore.NewRateLimiter(rdb, "llm"), "openai", 2, quartz.NewReal())
	b := llm.NewSharedLimiter(redisstore.NewRateLimiter(rdb, "llm"), "openai", 2, quartz.NewReal()) // another replica, same provider
	other := llm.NewSharedLimiter(redisstore.NewRateLimiter(rdb, "llm"), "ollama", 2, quartz.NewReal())
	ctx := context.Background()
	for i := range 2 {
		if err := a.Wait(ctx); err != nil {
			t.Fatalf("wait %d: %v", i, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	if err := b.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("replica b Wait = %v, want to block until the deadline (budget spent by a)", err)
	}
	if err := other.Wait(ctx); err != nil {
		t.Errorf("a different provider key is limited too: %v", err)
	}
}

func TestSharedLimiterDisabled(t *testing.T) {
	_, rdb := redistest.Start(t)
	lim := llm.NewSharedLimiter(redisstore.NewRateLimiter(rdb, "llm"), "off", 0, quartz.NewReal())
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for i := range 1000 {
		if err := lim.Wait(ctx); err != nil {
			t.Fatalf("wait %d with pacing off: %v", i, err)
		}
	}
	if n, err := rdb.Exists(ctx, "rb:rate:llm:off").Result(); err != nil || n != 0 {
		t.Errorf("disabled limiter touched redis: %d %v", n, err)
	}
}

func TestSharedLimiterWithClient(t *testing.T) {
	_, rdb := redistest.Start(t)
	lim := llm.NewSharedLimiter(redisstore.NewRateLimiter(rdb, "llm"), "client", 1, quartz.NewReal())
	var l llm.Limiter = lim // implements Limiter
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(context.Background(), "rb:rate:llm:client").Result(); err != nil || n != 1 {
		t.Errorf("limiter key not in redis: %d %v", n, err)
	}
}
