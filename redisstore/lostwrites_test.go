package redisstore

import (
	"context"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestCheckLostWritesFindsARunNobodyReads: a run waiting for a person is
// read by nobody; after Redis loses writes to it, CheckLostWrites (the
// periodic sweep) finds the loss and tells OnLostWrites once, with the
// versions.
func TestCheckLostWritesFindsARunNobodyReads(t *testing.T) {
	_, rdb := redistest.Start(t)
	ctx := context.Background()
	type loss struct {
		id          string
		stored, saw int64
	}
	var mu sync.Mutex
	var told []loss
	s := NewStoreWithOptions(rdb, StoreOptions{OnLostWrites: func(id string, stored, seen int64) {
		mu.Lock()
		told = append(told, loss{id, stored, seen})
		mu.Unlock()
	}})
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	before, err := rdb.Dump(ctx, s.runKey("r-1")).Result()
	if err != nil {
		t.Fatal(err)
	}
	r.Step = pipeline.StepSearch
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckLostWrites(ctx); err != nil || len(told) != 0 {
		t.Fatalf("a sweep with nothing lost told %+v (%v)", told, err)
	}
	if err := rdb.RestoreReplace(ctx, s.runKey("r-1"), 0, before).Err(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.CheckLostWrites(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if want := []loss{{"r-1", 1, 2}}; len(told) != 1 || told[0] != want[0] {
		t.Fatalf("told %+v, want %+v once", told, want)
	}
}
