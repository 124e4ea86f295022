package redisstore

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestLostWritesAreReportedAndStaleRepliesAreNot: a stored version lower
// than one this process saw before it sent the read is a loss and is logged;
// a reply older than a save that finished while it was on its way is not.
func TestLostWritesAreReportedAndStaleRepliesAreNot(t *testing.T) {
	_, rdb := redistest.Start(t)
	var logs bytes.Buffer
	s := NewStoreWithOptions(rdb, StoreOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	r.Step = pipeline.StepSearch
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}

	// A reply to a read sent before the save (floor 1) carries version 1.
	s.observeVersion("r-1", 1, 1)
	if logs.Len() != 0 {
		t.Fatalf("a stale reply was reported as a loss: %s", logs.String())
	}
	if got := s.watermark("r-1"); got != 2 {
		t.Fatalf("a stale reply moved the watermark to %d, want 2", got)
	}

	// Redis rolls back: the stored version goes below what was saved.
	if err := rdb.HSet(ctx, s.runKey("r-1"), "v", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "went back in time") {
		t.Fatalf("a lost write was not reported; logs: %q", logs.String())
	}
	logs.Reset()
	if _, err := s.Load(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Fatalf("the same loss was reported twice: %s", logs.String())
	}
}
