package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestAFileSharedBeforeThePlanIsApprovedIsReadAndCitedWithItsSharer: a
// guided run waiting at its plan takes a file shared in its own channel;
// it is a read source at once, the report cites it as "shared by" its
// sharer, and after the plan is approved no more files are taken. A file
// shared in another conversation (a direct message) is refused and never
// becomes a source.
func TestAFileSharedBeforeThePlanIsApprovedIsReadAndCitedWithItsSharer(t *testing.T) {
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: fileModel{&scripted{reviews: []pipeline.CritiqueOutput{passes}}}, Searcher: web{}, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs", Channel: "C1"}, Audience: pipeline.Audience{Conversation: "C1"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil || r.Status != pipeline.StatusWaiting || !pipeline.FilesOpen(r) {
		t.Fatalf("run %v (%v), want waiting at its plan and taking files", r.Status, err)
	}
	fromDM := pipeline.File{Name: "private.md", Kind: "markdown", Bytes: 30, Text: "Secret numbers.", SharedBy: "U1", SharedIn: "D1"}
	// A file shared in a DM is withheld from the channel's run: never read,
	// only counted (the audience boundary, invariant 12).
	r, err = eng.AttachFiles(ctx, "r-1", []pipeline.File{fromDM})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 1 || !r.Files[0].Withheld || r.Files[0].Text != "" || len(r.Sources) != 0 || r.Withheld.Count != 1 {
		t.Fatalf("files %+v, sources %d, withheld %d: want the DM's file withheld and counted", r.Files, len(r.Sources), r.Withheld.Count)
	}
	shared := pipeline.File{Name: "trial.md", Kind: "markdown", Bytes: 90, Text: "Field trial.\n" + fileQuote, SharedBy: "U0SHARER1", SharedIn: "C1"}
	r, err = eng.AttachFiles(ctx, "r-1", []pipeline.File{shared})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 2 || r.Files[1].SourceID != 1 || len(r.Sources) == 0 || r.Sources[0].Kind != pipeline.KindFile || !r.Sources[0].Fetched {
		t.Fatalf("files %+v, sources %d: want the shared file as read source 1", r.Files, len(r.Sources))
	}
	for range 4 {
		if r.Status != pipeline.StatusWaiting {
			break
		}
		if _, err := eng.Decide(ctx, r.Waiting, checkpoints.Decision{By: "U1", Action: checkpoints.Approve}); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.AttachFiles(ctx, "r-1", []pipeline.File{shared}); !errors.Is(err, pipeline.ErrFilesClosed) && !errors.Is(err, pipeline.ErrRunBusy) {
			t.Errorf("a file after the plan was approved: %v, want refused", err)
		}
		if err := eng.Advance(ctx, "r-1"); err != nil {
			t.Fatal(err)
		}
		if r, err = store.Load(ctx, "r-1"); err != nil {
			t.Fatal(err)
		}
	}
	if r.Report == nil {
		t.Fatalf("run %s at %s, want a report", r.Status, r.Step)
	}
	md := r.Report.Markdown
	if !strings.Contains(md, "[1] trial.md — shared by @U0SHARER1") {
		t.Errorf("the report does not cite the file with its sharer:\n%s", md)
	}
	if strings.Contains(md, "private.md") || strings.Contains(md, "Secret numbers") {
		t.Errorf("the file shared in a DM reached the report:\n%s", md)
	}
	if _, err := eng.AttachFiles(ctx, "r-1", []pipeline.File{shared}); !errors.Is(err, pipeline.ErrFilesClosed) {
		t.Errorf("a file for a finished run: %v, want ErrFilesClosed", err)
	}
}
