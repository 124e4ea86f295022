package redisstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
)

// holdFirstCacheRead counts the cache's reads and writes as sent (in
// pipelines) and holds the first round trip until release is closed,
// telling held when it does.
type holdFirstCacheRead struct {
	reads, writes, trips atomic.Int64
	held                 chan struct{}
	release              chan struct{}
}

func (h *holdFirstCacheRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdFirstCacheRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *holdFirstCacheRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			switch c.Name() {
			case "get", "mget":
				h.reads.Add(1)
			case "set":
				h.writes.Add(1)
			}
		}
		if h.trips.Add(1) == 1 {
			close(h.held)
			<-h.release
		}
		return next(ctx, cmds)
	}
}

// TestPageCacheCallsThatMeetGoTogether: cache calls that arrive while one
// is on its way to Redis go together after it, in one round trip — the
// reads of six fetches at once are two reads, not six — and each caller
// gets its own values, and its own write stored.
func TestPageCacheCallsThatMeetGoTogether(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := t.Context()
	c := NewPageCache(rdb)
	for i := range 3 {
		if err := c.Set(ctx, fmt.Sprintf("page:%d", i), []byte(fmt.Sprintf("text %d", i)), time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	h := &holdFirstCacheRead{held: make(chan struct{}), release: make(chan struct{})}
	rdb.AddHook(h)
	const callers = 6
	got := make([][][]byte, callers)
	errs := make([]error, callers+1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		got[0], errs[0] = c.Get(ctx, "page:0", "robots:0")
	}()
	<-h.held
	for i := 1; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.Get(ctx, fmt.Sprintf("page:%d", i), fmt.Sprintf("robots:%d", i))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		errs[callers] = c.Set(ctx, "robots:5", []byte("200\nAllow: /"), time.Minute)
	}()
	waitFor(t, "the calls to gather behind the first one", func() bool { return c.batches.waiting("") == callers })
	close(h.release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := h.trips.Load(); n != 2 {
		t.Errorf("%d round trips, want 2 (the first call, then the others together)", n)
	}
	if n := h.reads.Load(); n != 2 {
		t.Errorf("%d reads sent, want 2", n)
	}
	for i := range callers {
		want := ""
		if i < 3 {
			want = fmt.Sprintf("text %d", i)
		}
		if len(got[i]) != 2 || string(got[i][0]) != want || got[i][1] != nil {
			t.Errorf("caller %d got %q, want [%q <nil>]", i, got[i], want)
		}
	}
	if v, err := c.Get(ctx, "robots:5"); err != nil || len(v) != 1 || string(v[0]) != "200\nAllow: /" {
		t.Errorf("the write that went with the reads reads back %q (%v)", v, err)
	}
}
