package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

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

// watchBackends are the two Redis servers researchbot runs on: each gives
// two clients of one server (two processes).
var watchBackends = map[string]func(t *testing.T) (*redis.Client, *redis.Client){
	"redis-server": func(t *testing.T) (*redis.Client, *redis.Client) {
		srv, rdb := redistest.Start(t)
		_, other := redistest.Connect(t, srv.URL)
		return rdb, other
	},
	"embedded": func(t *testing.T) (*redis.Client, *redis.Client) {
		conn, err := Connect(t.Context(), "", ConnOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		other := redis.NewClient(&redis.Options{Addr: conn.Client.Options().Addr})
		t.Cleanup(func() { _ = other.Close() })
		return conn.Client, other
	},
}

// startWatch creates run r-1 and watches it with a safety-net check of an
// hour on a mock clock, returning the runs Watch sends once the first (the
// run as created) was received, and the clock.
func startWatch(t *testing.T, ctx context.Context, rdb *redis.Client) (<-chan *pipeline.Run, *quartz.Mock) {
	t.Helper()
	clock := quartz.NewMock(t)
	s := NewStoreWithOptions(rdb, StoreOptions{Clock: clock})
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	trap := clock.Trap().NewTicker("watch")
	defer trap.Close()
	runs := s.Watch(ctx, "r-1", time.Hour)
	trap.MustWait(ctx).MustRelease(ctx)
	if r := receive(t, runs); r.Version != 1 {
		t.Fatalf("first sent version %d", r.Version)
	}
	return runs, clock
}

// receive returns the next run Watch sends; the bound only fails a test
// that would otherwise hang.
func receive(t *testing.T, runs <-chan *pipeline.Run) *pipeline.Run {
	t.Helper()
	select {
	case r, ok := <-runs:
		if !ok {
			t.Fatal("Watch ended")
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no run from Watch")
	}
	return nil
}

// TestWatchIsToldOfASave: a save by another client reaches Watch through
// the save's announcement — the safety-net check (an hour, on a clock that
// never moves) cannot have delivered it — and Watch closes with its context.
func TestWatchIsToldOfASave(t *testing.T) {
	for name, backend := range watchBackends {
		t.Run(name, func(t *testing.T) {
			rdb, otherClient := backend(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			runs, _ := startWatch(t, ctx, rdb)
			reads := &countReads{}
			rdb.AddHook(reads)
			other := NewStore(otherClient, "")
			for want := int64(2); want <= 4; want++ {
				r, err := other.Load(ctx, "r-1")
				if err != nil {
					t.Fatal(err)
				}
				r.Step = pipeline.StepSearch
				if want == 4 {
					r.Status = pipeline.StatusCompleted
				}
				if err := other.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
				if got := receive(t, runs); got.Version != want || got.Step != pipeline.StepSearch {
					t.Fatalf("sent version %d at %s, want %d at search", got.Version, got.Step, want)
				}
			}
			if n := reads.n.Load(); n != 0 {
				t.Errorf("Watch read the run %d times: the announcements carry it", n)
			}
			cancel()
			for r := range runs { // closes with its context
				t.Fatalf("sent version %d after the context ended", r.Version)
			}
		})
	}
}

// TestWatchSafetyNetCatchesAMissedAnnouncement: a change nobody announced
// (as when the announcement was lost) is read at the next safety-net check.
func TestWatchSafetyNetCatchesAMissedAnnouncement(t *testing.T) {
	for name, backend := range watchBackends {
		t.Run(name, func(t *testing.T) {
			rdb, otherClient := backend(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			runs, clock := startWatch(t, ctx, rdb)
			// A write that does not announce itself: what a watcher sees
			// when the announcement was lost.
			r, err := NewStore(otherClient, "").Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			r.Status, r.Version = pipeline.StatusCompleted, 2
			data, _, err := NewStore(otherClient, "").encode(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := otherClient.HSet(ctx, "rb:run:r-1", "v", 2, "data", data).Err(); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Hour).MustWait(ctx)
			if got := receive(t, runs); got.Version != 2 || got.Status != pipeline.StatusCompleted {
				t.Fatalf("sent version %d %s, want 2 completed", got.Version, got.Status)
			}
			cancel()
			for range runs {
			}
		})
	}
}

// TestWatchSurvivesADroppedSubscription: Redis drops the watcher's
// connection (as on a restart); a save made while it is away is still
// sent — at the latest at the next safety-net check, usually as soon as
// the subscription is back.
func TestWatchSurvivesADroppedSubscription(t *testing.T) {
	rdb, otherClient := watchBackends["redis-server"](t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	runs, clock := startWatch(t, ctx, rdb)
	if n, err := otherClient.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n != 1 {
		t.Fatalf("killed %d subscriptions: %v", n, err)
	}
	other := NewStore(otherClient, "")
	r, err := other.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	r.Status = pipeline.StatusCompleted
	if err := other.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour).MustWait(ctx)
	if got := receive(t, runs); got.Version != 2 || got.Status != pipeline.StatusCompleted {
		t.Fatalf("sent version %d %s, want 2 completed", got.Version, got.Status)
	}
	cancel()
	for range runs {
	}
}

// TestASaveHoldsWhenItsAnnouncementIsRefused: a Redis user that may not
// PUBLISH still saves (followers then learn of it at their safety-net
// check).
func TestASaveHoldsWhenItsAnnouncementIsRefused(t *testing.T) {
	srv, rdb := redistest.Start(t)
	ctx := t.Context()
	if err := rdb.Do(ctx, "ACL", "SETUSER", "quiet", "on", ">pw", "~*", "&*", "+@all", "-publish").Err(); err != nil {
		t.Fatal(err)
	}
	quiet := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "quiet", Password: "pw"})
	defer quiet.Close()
	if err := quiet.Publish(ctx, "rb:saved:r-1", 1).Err(); err == nil {
		t.Fatal("the user may PUBLISH: the test proves nothing")
	}
	s := NewStore(quiet, "")
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Load(ctx, "r-1")
	r.Status = pipeline.StatusCompleted
	if err := s.Save(ctx, r); err != nil {
		t.Fatalf("save by a user without PUBLISH: %v", err)
	}
	if got, err := NewStore(rdb, "").Load(ctx, "r-1"); err != nil || got.Version != 2 || got.Status != pipeline.StatusCompleted {
		t.Fatalf("stored %+v, %v", got, err)
	}
}

// countReads counts the commands of a client that read a run's hash.
type countReads struct{ n atomic.Int64 }

func (c *countReads) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countReads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "hget" || n == "hmget" {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *countReads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if n := cmd.Name(); n == "hget" || n == "hmget" {
				c.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// publishes is how many PUBLISH commands the server has run (INFO
// commandstats; those a script runs are counted too).
func publishes(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_publish:calls="); ok {
			calls, _, _ := strings.Cut(rest, ",")
			n, _ := strconv.Atoi(calls)
			return n
		}
	}
	return 0
}

// saveOnce loads the run through s and saves it with the given step.
func saveOnce(t *testing.T, s *Store, step pipeline.Step) {
	t.Helper()
	r, err := s.Load(t.Context(), "r-1")
	if err != nil {
		t.Fatal(err)
	}
	r.Step = step
	if err := s.Save(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

// TestASaveIsAnnouncedOnlyWhileAnotherProcessWatches: a save of a run
// nobody follows publishes nothing; while another process watches it, each
// save is announced (and reaches that Watch); once the Watch has ended,
// saves are quiet again.
func TestASaveIsAnnouncedOnlyWhileAnotherProcessWatches(t *testing.T) {
	rdb, otherClient := watchBackends["redis-server"](t)
	saver := NewStore(rdb, "")
	if err := saver.Create(t.Context(), newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	p0 := publishes(t, rdb)
	saveOnce(t, saver, pipeline.StepSearch)
	if n := publishes(t, rdb) - p0; n != 0 {
		t.Fatalf("a save of a run nobody follows published %d times", n)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTicker("watch")
	runs := NewStoreWithOptions(otherClient, StoreOptions{Clock: clock}).Watch(ctx, "r-1", time.Hour)
	trap.MustWait(ctx).MustRelease(ctx)
	trap.Close()
	if r := receive(t, runs); r.Version != 2 {
		t.Fatalf("first sent version %d, want 2", r.Version)
	}
	p1 := publishes(t, rdb)
	saveOnce(t, saver, pipeline.StepFetch)
	if got := receive(t, runs); got.Version != 3 || got.Step != pipeline.StepFetch {
		t.Fatalf("sent version %d at %s, want 3 at fetch", got.Version, got.Step)
	}
	if n := publishes(t, rdb) - p1; n != 1 {
		t.Fatalf("a save of a run another process follows published %d times, want 1", n)
	}

	cancel()
	for range runs { // closed once the Watch has taken itself out of the count
	}
	if n, err := rdb.HGet(t.Context(), "rb:run:r-1", "watchers").Int(); err != nil || n != 0 {
		t.Fatalf("watchers after the Watch ended: %d (%v), want 0", n, err)
	}
	p2 := publishes(t, rdb)
	saveOnce(t, saver, pipeline.StepAnalyze)
	if n := publishes(t, rdb) - p2; n != 0 {
		t.Fatalf("a save after the Watch ended published %d times", n)
	}
}

// TestWatchOfTheSavingProcessIsToldInMemory: a Watch in the process that
// saves the run (the same Store, as a terminal run) gets each save at
// once, without a PUBLISH and without reading the run.
func TestWatchOfTheSavingProcessIsToldInMemory(t *testing.T) {
	for name, backend := range watchBackends {
		t.Run(name, func(t *testing.T) {
			rdb, _ := backend(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			clock := quartz.NewMock(t)
			s := NewStoreWithOptions(rdb, StoreOptions{Clock: clock})
			if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
				t.Fatal(err)
			}
			trap := clock.Trap().NewTicker("watch")
			runs := s.Watch(ctx, "r-1", time.Hour)
			trap.MustWait(ctx).MustRelease(ctx)
			trap.Close()
			if r := receive(t, runs); r.Version != 1 {
				t.Fatalf("first sent version %d", r.Version)
			}
			p0 := 0
			if name == "redis-server" {
				p0 = publishes(t, rdb)
			}
			r, err := s.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			reads := &countReads{}
			rdb.AddHook(reads)
			for want := int64(2); want <= 4; want++ {
				r.Step = pipeline.StepSearch
				if err := s.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
				if got := receive(t, runs); got.Version != want || got.Step != pipeline.StepSearch {
					t.Fatalf("sent version %d at %s, want %d at search", got.Version, got.Step, want)
				}
			}
			if n := reads.n.Load(); n != 0 {
				t.Errorf("Watch read the run %d times: the saves handed it over", n)
			}
			if name == "redis-server" {
				if n := publishes(t, rdb) - p0; n != 0 {
					t.Errorf("saves followed only by their own process published %d times", n)
				}
			}
		})
	}
}

// TestWatchAdvancedHereSubscribesOnlyOnceTheRunIsNotCarriedHere: the Watch
// of the process whose worker carries the run (a terminal run) is handed
// that worker's saves in memory and neither subscribes nor counts itself
// among the run's watchers; it subscribes once another process's save
// shows up at the safety-net check, or once a save says the run waits for
// a person — and then sends the other process's saves without a check.
func TestWatchAdvancedHereSubscribesOnlyOnceTheRunIsNotCarriedHere(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stop ends the run's being carried here; it returns the version
		// Watch then sends.
		stop func(t *testing.T, ctx context.Context, s, other *Store, clock *quartz.Mock) int64
	}{
		{"another process saves the run", func(t *testing.T, ctx context.Context, _, other *Store, clock *quartz.Mock) int64 {
			saveOnce(t, other, pipeline.StepAnalyze)
			clock.Advance(time.Hour).MustWait(ctx)
			return 4
		}},
		{"the run waits for a person", func(t *testing.T, ctx context.Context, s, _ *Store, _ *quartz.Mock) int64 {
			r, err := s.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			r.Status = pipeline.StatusWaiting
			if err := s.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			return 4
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, otherClient := watchBackends["redis-server"](t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			clock := quartz.NewMock(t)
			s := NewStoreWithOptions(rdb, StoreOptions{Clock: clock})
			other := NewStore(otherClient, "")
			if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
				t.Fatal(err)
			}
			subscribers := func() int64 {
				t.Helper()
				n, err := rdb.PubSubNumSub(ctx, "rb:saved:r-1").Result()
				if err != nil {
					t.Fatal(err)
				}
				return n["rb:saved:r-1"]
			}
			trap := clock.Trap().NewTicker("watch")
			runs := s.WatchAdvancedHere(ctx, "r-1", time.Hour)
			trap.MustWait(ctx).MustRelease(ctx)
			trap.Close()
			r, err := s.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			for want := int64(2); want <= 3; want++ {
				r.Status, r.Step = pipeline.StatusRunning, pipeline.StepSearch
				if err := s.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
				if got := receive(t, runs); got.Version != want {
					t.Fatalf("sent version %d, want %d", got.Version, want)
				}
			}
			if n := subscribers(); n != 0 {
				t.Errorf("%d subscriptions while the worker here carries the run, want none", n)
			}
			if err := rdb.HGet(ctx, "rb:run:r-1", "watchers").Err(); !errors.Is(err, redis.Nil) {
				t.Errorf("the Watch counted itself among the run's watchers (%v), want no count", err)
			}
			want := tc.stop(t, ctx, s, other, clock)
			if got := receive(t, runs); got.Version != want {
				t.Fatalf("sent version %d, want %d", got.Version, want)
			}
			// Subscribed now: another process's save is sent without a check.
			saveOnce(t, other, pipeline.StepWrite)
			if got := receive(t, runs); got.Version != want+1 || got.Step != pipeline.StepWrite {
				t.Fatalf("sent version %d at %s, want %d at write", got.Version, got.Step, want+1)
			}
			if n := subscribers(); n != 1 {
				t.Errorf("%d subscriptions once the run is not carried here, want 1", n)
			}
			cancel()
			for range runs {
			}
		})
	}
}
