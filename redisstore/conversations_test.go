package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/scheduler"
)

func TestConversationsCASAndOwner(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	s := NewConversations(rdb, "", time.Hour)
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	c, _ := scheduler.BeginConversation("U1", "C1", "Europe/Paris", t0)

	if _, _, ok, err := s.Get(ctx, "C1", "1.000"); err != nil || ok {
		t.Fatalf("Get of nothing = ok %v, err %v", ok, err)
	}
	if ok, err := s.Create(ctx, "C1", "1.000", c); err != nil || !ok {
		t.Fatalf("Create = %v, %v", ok, err)
	}
	if ok, err := s.Create(ctx, "C1", "1.000", c); err != nil || ok {
		t.Fatalf("second Create in the same thread = %v, %v; want false", ok, err)
	}
	got, v, ok, err := s.Get(ctx, "C1", "1.000")
	if err != nil || !ok || v != 1 {
		t.Fatalf("Get = v%d ok %v err %v", v, ok, err)
	}
	if got.Spec.Owner != "U1" || got.Spec.TimeZone != "Europe/Paris" || got.Step != scheduler.StepExploration {
		t.Errorf("round trip lost data: %+v", got.Spec)
	}
	if ttl := rdb.PTTL(ctx, "rb:streamconv:C1:1.000").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("TTL = %s, want (0, 1h]", ttl)
	}

	// The owner cannot be changed by a write.
	got.Spec.Owner = "U2"
	got.Spec.Purpose = "Watch heat pumps"
	nv, ok, err := s.Update(ctx, "C1", "1.000", 1, got)
	if err != nil || !ok || nv != 2 {
		t.Fatalf("Update = %d %v %v", nv, ok, err)
	}
	// A stale writer loses and writes nothing.
	stale := got
	stale.Spec.Purpose = "stale"
	if _, ok, err := s.Update(ctx, "C1", "1.000", 1, stale); err != nil || ok {
		t.Fatalf("stale Update = %v %v, want a refusal", ok, err)
	}
	again, v, _, _ := s.Get(ctx, "C1", "1.000")
	if v != 2 || again.Spec.Purpose != "Watch heat pumps" || again.Spec.Owner != "U1" {
		t.Errorf("after updates: v%d purpose %q owner %q", v, again.Spec.Purpose, again.Spec.Owner)
	}
	// Another thread is another conversation.
	if _, _, ok, _ := s.Get(ctx, "C1", "2.000"); ok {
		t.Error("a conversation leaked into another thread")
	}
	if err := s.Delete(ctx, "C1", "1.000"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Update(ctx, "C1", "1.000", 2, again); err != nil || ok {
		t.Errorf("Update of a deleted conversation = %v %v, want a refusal", ok, err)
	}
}

func TestConversationsExpire(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	s := NewConversations(rdb, "t:", 150*time.Millisecond)
	c, _ := scheduler.BeginConversation("U1", "C1", "", time.Now())
	if ok, err := s.Create(ctx, "C1", "9.9", c); err != nil || !ok {
		t.Fatal(ok, err)
	}
	// The conversation carries the TTL; Redis ends it then (deleting the
	// key stands in for waiting: expiry itself is Redis's business).
	key := s.key("C1", "9.9")
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > 150*time.Millisecond {
		t.Fatalf("conversation TTL = %v, want (0, 150ms]", ttl)
	}
	rdb.Del(ctx, key)
	if _, _, ok, err := s.Get(ctx, "C1", "9.9"); err != nil || ok {
		t.Errorf("an abandoned conversation did not expire: ok %v err %v", ok, err)
	}
}
