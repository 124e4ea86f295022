package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
)

func TestDefinitionCreateReadAndBreakerReset(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "t:")
	ctx := context.Background()
	now := time.Now()
	def := checkpoints.Builtins(now)[0]
	def.ID = "custom"

	if _, err := s.Definition(ctx, "custom"); !errors.Is(err, checkpoints.ErrNoDefinition) {
		t.Fatalf("missing definition: %v", err)
	}
	if err := s.CreateDefinition(ctx, def); err != nil {
		t.Fatal(err)
	}
	again := def
	again.Label = "Another"
	if err := s.CreateDefinition(ctx, again); !errors.Is(err, checkpoints.ErrDefinitionExists) {
		t.Fatalf("second create: %v", err)
	}
	got, err := s.Definition(ctx, "custom")
	if err != nil || got.Label != def.Label {
		t.Fatalf("read back %q, %v; the second create must change nothing", got.Label, err)
	}
	bad := def
	bad.ID = "bad"
	bad.Label = ""
	if err := s.CreateDefinition(ctx, bad); err == nil {
		t.Fatal("an invalid definition was stored")
	}
	if _, err := s.Definition(ctx, "bad"); !errors.Is(err, checkpoints.ErrNoDefinition) {
		t.Fatalf("invalid definition stored: %v", err)
	}

	for range 3 {
		if _, err := s.RecordCheckpointFailure(ctx, "custom", now, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.ClaimBreakerAlert(ctx, "custom", time.Hour)
	if err != nil || !first {
		t.Fatalf("first alert claim: %v %v", first, err)
	}
	if second, _ := s.ClaimBreakerAlert(ctx, "custom", time.Hour); second {
		t.Fatal("a second alert was claimed")
	}
	if err := s.ResetBreaker(ctx, "custom"); err != nil {
		t.Fatal(err)
	}
	if fails, _ := s.CheckpointFailures(ctx, "custom", now, time.Hour); len(fails) != 0 {
		t.Fatalf("%d failures after reset", len(fails))
	}
	if again, _ := s.ClaimBreakerAlert(ctx, "custom", time.Hour); !again {
		t.Fatal("after a reset, a new trip must alert again")
	}
}

// TestDefinitionsAreCreatedTogetherOnlyWhereNoneIsStored: a store with no
// definition takes several in one step; one that holds any (an admin's
// edit, another replica's seeding) takes none of them and keeps its own.
func TestDefinitionsAreCreatedTogetherOnlyWhereNoneIsStored(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	builtins := checkpoints.Builtins(time.Now())
	done, err := s.CreateDefinitionsIfNone(ctx, builtins)
	if err != nil || !done {
		t.Fatalf("into an empty store: %v, %v; want stored", done, err)
	}
	defs, err := s.Definitions(ctx)
	if err != nil || len(defs) != len(builtins) {
		t.Fatalf("%d definitions stored (%v), want %d", len(defs), err, len(builtins))
	}
	edited := builtins[0]
	edited.Label = "Edited by an admin"
	if err := s.PutDefinition(ctx, edited); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HDel(ctx, "rb:defs", builtins[1].ID).Err(); err != nil {
		t.Fatal(err)
	}
	done, err = s.CreateDefinitionsIfNone(ctx, builtins)
	if err != nil || done {
		t.Fatalf("into a store that holds some: %v, %v; want nothing written", done, err)
	}
	if got, err := s.Definition(ctx, edited.ID); err != nil || got.Label != edited.Label {
		t.Errorf("the admin's edit reads back %q (%v): it was overwritten", got.Label, err)
	}
	if _, err := s.Definition(ctx, builtins[1].ID); !errors.Is(err, checkpoints.ErrNoDefinition) {
		t.Errorf("a definition was written into a store that holds some: %v", err)
	}
	bad := builtins[0]
	bad.Label = ""
	if err := rdb.Del(ctx, "rb:defs").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDefinitionsIfNone(ctx, []checkpoints.Definition{bad}); err == nil {
		t.Error("an invalid definition was stored")
	}
}
