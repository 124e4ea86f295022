package redisstore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

func testStream(id, name string, created time.Time) *scheduler.Stream {
	return &scheduler.Stream{
		ID: id, Owner: "U1", CreatedAt: created, Policy: scheduler.PolicyAuto,
		Spec: scheduler.Spec{
			Owner: "U1", Channel: "C1", CreatedAt: created, Purpose: "Watch the market", Name: name,
			Type: scheduler.TypeMarket, Keywords: []string{"heat pumps"}, FocusAreas: []string{"Nordics"},
			Frequency: scheduler.Daily, TimeOfDay: "09:00", TimeZone: "UTC",
		},
		Known: pipeline.Known{URLs: []string{"https://a.example/x"}, Simhashes: []uint64{42}},
	}
}

func TestStreamsCRUD(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	s := NewStreams(rdb, "")
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)

	a := testStream("s-a", "Nordic  Heat Pumps", t0)
	if err := s.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	if a.Version != 1 {
		t.Fatalf("version after create = %d, want 1", a.Version)
	}
	b := testStream("s-b", "Grid", t0.Add(time.Hour))
	if err := s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	// Same name, other spelling: refused; the loser's version is untouched.
	dup := testStream("s-c", " nordic heat   PUMPS ", t0)
	if err := s.Create(ctx, dup); !errors.Is(err, scheduler.ErrNameTaken) {
		t.Fatalf("duplicate name: err = %v, want ErrNameTaken", err)
	}
	if dup.Version != 0 {
		t.Errorf("refused create changed the version to %d", dup.Version)
	}
	if err := s.Create(ctx, testStream("s-a", "Other", t0)); err == nil {
		t.Error("a second stream with an existing id was accepted")
	}

	got, err := s.Get(ctx, "s-a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Name != "Nordic  Heat Pumps" || got.Version != 1 || got.Known.Simhashes[0] != 42 || !got.CreatedAt.Equal(t0) {
		t.Fatalf("Get = %+v", got)
	}
	byName, err := s.GetByName(ctx, "NORDIC heat pumps")
	if err != nil || byName.ID != "s-a" {
		t.Fatalf("GetByName = %v, %v", byName, err)
	}
	if _, err := s.GetByName(ctx, "nope"); !errors.Is(err, scheduler.ErrStreamNotFound) {
		t.Errorf("GetByName(nope) err = %v", err)
	}
	if _, err := s.Get(ctx, "s-zz"); !errors.Is(err, scheduler.ErrStreamNotFound) {
		t.Errorf("Get(missing) err = %v", err)
	}

	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "s-a" || list[1].ID != "s-b" {
		t.Fatalf("List = %d streams, want s-a then s-b", len(list))
	}

	got.Paused = true
	if err := s.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 {
		t.Errorf("version after update = %d, want 2", got.Version)
	}
	again, _ := s.Get(ctx, "s-a")
	if !again.Paused || again.Version != 2 {
		t.Errorf("update not stored: %+v", again)
	}
	// Renaming is refused.
	again.Spec.Name = "Renamed"
	if err := s.Update(ctx, again); err == nil || errors.Is(err, scheduler.ErrStreamConflict) {
		t.Errorf("rename: err = %v, want a refusal", err)
	}

	if err := s.Delete(ctx, "s-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "s-a"); !errors.Is(err, scheduler.ErrStreamNotFound) {
		t.Errorf("deleted stream still there: %v", err)
	}
	if err := s.Delete(ctx, "s-a"); !errors.Is(err, scheduler.ErrStreamNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := s.Update(ctx, got); !errors.Is(err, scheduler.ErrStreamNotFound) {
		t.Errorf("update of a deleted stream: %v", err)
	}
	// The name is free again.
	if err := s.Create(ctx, testStream("s-d", "nordic heat pumps", t0)); err != nil {
		t.Fatalf("name not freed by delete: %v", err)
	}
	if list, _ := s.List(ctx); len(list) != 2 {
		t.Errorf("List after delete and create = %d streams, want 2", len(list))
	}
}

func TestStreamsUpdateConflict(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	s := NewStreams(rdb, "rbtest:")
	if err := s.Create(ctx, testStream("s-a", "A", time.Now())); err != nil {
		t.Fatal(err)
	}
	one, _ := s.Get(ctx, "s-a")
	two, _ := s.Get(ctx, "s-a")
	one.Paused = true
	if err := s.Update(ctx, one); err != nil {
		t.Fatal(err)
	}
	two.Policy = scheduler.PolicyHoldDraft
	err := s.Update(ctx, two)
	if !errors.Is(err, scheduler.ErrStreamConflict) {
		t.Fatalf("stale update: err = %v, want ErrStreamConflict", err)
	}
	if two.Version != 1 {
		t.Errorf("a refused update changed the version to %d", two.Version)
	}
	cur, _ := s.Get(ctx, "s-a")
	if !cur.Paused || cur.Policy != scheduler.PolicyAuto {
		t.Errorf("the stale writer changed the stream: %+v", cur)
	}
	// Concurrent writers on one version: exactly one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c := *cur
			if s.Update(ctx, &c) == nil {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d concurrent updates of one version won, want 1", wins.Load())
	}
	// Keys carry the prefix.
	if n, _ := rdb.Exists(ctx, "rbtest:stream:s-a", "rbtest:streamname:a", "rbtest:streams").Result(); n != 3 {
		t.Errorf("%d of the prefixed keys exist, want 3", n)
	}
}

func TestStreamsClaimFire(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	s := NewStreams(rdb, "")
	fire := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			ok, err := s.ClaimFire(ctx, "s-a", fire, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims of one fire won, want 1", wins.Load())
	}
	// Another fire time, or another stream, is a different claim.
	if ok, _ := s.ClaimFire(ctx, "s-a", fire.Add(24*time.Hour), time.Minute); !ok {
		t.Error("the next fire could not be claimed")
	}
	if ok, _ := s.ClaimFire(ctx, "s-b", fire, time.Minute); !ok {
		t.Error("another stream's fire could not be claimed")
	}
	key := "rb:stream:s-a:fire:" + "1777712400"
	if fire.Unix() != 1777712400 {
		t.Fatalf("test constant: %d", fire.Unix())
	}
	ttl, err := rdb.TTL(ctx, key).Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Errorf("claim key %s ttl = %v, %v", key, ttl, err)
	}
	// After the TTL the fire can be claimed again (a claimer that died).
	if ok, _ := s.ClaimFire(ctx, "s-c", fire, 50*time.Millisecond); !ok {
		t.Fatal("first claim failed")
	}
	// The claim carries the TTL; Redis ends it then (deleting the key
	// stands in for waiting: expiry itself is Redis's business).
	claim := "rb:stream:s-c:fire:1777712400"
	if ttl := rdb.PTTL(ctx, claim).Val(); ttl <= 0 || ttl > 50*time.Millisecond {
		t.Fatalf("claim TTL = %v, want (0, 50ms]", ttl)
	}
	rdb.Del(ctx, claim)
	if ok, _ := s.ClaimFire(ctx, "s-c", fire, time.Minute); !ok {
		t.Error("an expired claim could not be claimed again")
	}
	if _, err := s.ClaimFire(ctx, "s-c", fire, 0); err == nil {
		t.Error("a claim without ttl was accepted")
	}
}
