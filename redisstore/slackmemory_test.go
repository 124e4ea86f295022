package redisstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
)

// TestSlackMemoryKeysAreTheKeyTables: each thing the Slack adapter
// remembers is kept under its row of the key table (the keys bot named
// before they moved here, so a rolling upgrade keeps what replicas
// remembered), with its ttl, and is read back by name.
func TestSlackMemoryKeysAreTheKeyTables(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	m := NewSlackMemory(rdb)
	const ttl = time.Hour
	for _, err := range []error{
		m.RememberCheckpointMessage(ctx, "r1.cp", `{"ts":"1"}`, ttl),
		m.RememberProgressMessage(ctx, "r1", "2", ttl),
		m.RememberFinalPost(ctx, "r1", "summary", "3", ttl),
		m.RememberDraftFile(ctx, "r1", "version", "2", ttl),
		m.RememberRunOfThread(ctx, "C1", "4", "r1", ttl),
		m.RememberAssistantThread(ctx, "D1", "5", `{"user":"U1"}`, ttl),
		m.RememberAssistantOff(ctx, "T1", "not_allowed", ttl),
		m.RememberPlanStream(ctx, "r1", `{"ts":"6"}`, ttl),
		m.RememberPlanStreamOff(ctx, "T1", "feature_not_enabled", ttl),
		m.RememberEscalated(ctx, "r1", "r1.cp", "U2", ttl),
		m.RememberHomePublished(ctx, "U1", ttl),
		m.RememberSharedSummary(ctx, "r1", "C2", "7", ttl),
		m.RememberPostIntent(ctx, "r1", "outcome", time.UnixMilli(1700000000000), ttl),
		m.RememberPostIntent(ctx, "r1", "outcome", time.UnixMilli(1700000009000), ttl), // the earliest is kept
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if first, err := m.FirstDelivery(ctx, "action", "A1", ttl); err != nil || !first {
		t.Fatalf("first delivery: %v, %v", first, err)
	}
	if first, err := m.StartShare(ctx, "r1", "C2", ttl); err != nil || !first {
		t.Fatalf("first share: %v, %v", first, err)
	}
	want := []string{
		"rb:slack:assistant:D1:5", "rb:slack:assistant:off:T1", "rb:slack:cp:r1.cp", "rb:slack:draftfile:r1",
		"rb:slack:escalated:r1:r1.cp:U2", "rb:slack:final:r1", "rb:slack:home:U1", "rb:slack:intent:r1:outcome", "rb:slack:planstream:off:T1",
		"rb:slack:planstream:r1", "rb:slack:progress:r1", "rb:slack:seen:action:A1", "rb:slack:share:done:r1:C2",
		"rb:slack:share:lock:r1:C2", "rb:slack:thread:C1:4",
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Fatalf("keys\n%v\nwant\n%v", keys, want)
	}
	if at, found, err := m.PostIntent(ctx, "r1", "outcome"); err != nil || !found || at.UnixMilli() != 1700000000000 {
		t.Errorf("post intent = %v, %v, %v; want the earliest", at, found, err)
	}
	if _, found, err := m.PostIntent(ctx, "r1", "root"); err != nil || found {
		t.Errorf("post intent of a post never tried: found=%v, %v", found, err)
	}
	for _, k := range keys {
		if d := rdb.TTL(ctx, k).Val(); d <= 0 || d > ttl {
			t.Errorf("%s: ttl %v, want at most %v", k, d, ttl)
		}
	}

	if v, ok, err := m.CheckpointMessage(ctx, "r1.cp"); err != nil || !ok || v != `{"ts":"1"}` {
		t.Errorf("checkpoint message %q %v %v", v, ok, err)
	}
	if v, ok, _ := m.RunOfThread(ctx, "C1", "4"); !ok || v != "r1" {
		t.Errorf("run of thread %q %v", v, ok)
	}
	if f, _ := m.FinalPost(ctx, "r1"); f["summary"] != "3" {
		t.Errorf("final post %v", f)
	}
	if sent, _ := m.Escalated(ctx, "r1", "r1.cp", "U2"); !sent {
		t.Error("the escalation is not remembered")
	}
	if sent, _ := m.Escalated(ctx, "r1", "r1.cp", "U3"); sent {
		t.Error("an escalation never sent is remembered")
	}
	if seen, _ := m.HomePublished(ctx, "U9"); seen {
		t.Error("an App Home never published is remembered")
	}
	if first, _ := m.FirstDelivery(ctx, "action", "A1", ttl); first {
		t.Error("a delivery taken twice")
	}
	if first, _ := m.StartShare(ctx, "r1", "C2", ttl); first {
		t.Error("a share started twice")
	}
	if _, ok, err := m.ProgressMessage(ctx, "r9"); ok || err != nil {
		t.Errorf("an unknown run's progress message: %v %v", ok, err)
	}
}
