package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// steeringWeb is the scripted web; its first search runs during calls
// (a person steering the run while it searches).
type steeringWeb struct {
	web
	once   sync.Once
	during func()
}

func (w *steeringWeb) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	w.once.Do(w.during)
	return w.web.Search(ctx, q)
}

// steeringEngine is an engine on a private redis-server with the scripted
// model and the web w.
func steeringEngine(t *testing.T, m *scripted, w pipeline.Searcher) (*pipeline.Engine, *redisstore.Store) {
	t.Helper()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: m, Searcher: w, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.SeedDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	return eng, store
}

// TestASteeringNoteGivenDuringSearchReachesTheNextPrompts: a note recorded
// while the search step runs (the worker holds the run in memory) is kept
// with the run, the search's work is kept too (nothing is done twice), and
// every later prompt — ranking, analysis, writing, review — carries it as
// the requester's note, not the prompt before it; the report's provenance
// and trace list it.
func TestASteeringNoteGivenDuringSearchReachesTheNextPrompts(t *testing.T) {
	ctx := context.Background()
	const note = "Focus on Europe; skip vendor blogs."
	m := &scripted{reviews: []pipeline.CritiqueOutput{passes}}
	w := &steeringWeb{}
	eng, store := steeringEngine(t, m, w)
	var steerErr error
	w.during = func() {
		_, n, err := eng.Steer(ctx, "r-1", "U1", "  "+note+"\n")
		steerErr = err
		if err == nil && (n.Step != pipeline.StepSearch || n.Text != note) {
			t.Errorf("recorded note %+v, want %q during search", n, note)
		}
	}
	if _, err := eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if steerErr != nil {
		t.Fatalf("steering during search: %v", steerErr)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("run %s at %s (%s), want completed", r.Status, r.Step, r.FallbackReason)
	}
	if len(r.Notes) != 1 || r.Notes[0].Text != note || r.Notes[0].By != "U1" {
		t.Errorf("stored notes %+v, want the one note", r.Notes)
	}
	if n := len(m.sent("research_plan")); n != 1 {
		t.Errorf("the plan was asked %d times, want once", n)
	}
	block := "<requester_note n=\"1\" given_during=\"search\">\n" + note + "\n</requester_note>"
	if p := m.sent("research_plan")[0]; strings.Contains(p, "requester_note") {
		t.Errorf("the plan, asked before the note, carries it:\n%s", p)
	}
	for _, name := range []string{"source_relevance", "analysis", "research_draft", "critique"} {
		ps := m.sent(name)
		if len(ps) == 0 {
			t.Errorf("no %s prompt was sent", name)
			continue
		}
		if !strings.Contains(ps[0], block) {
			t.Errorf("the %s prompt after the note does not carry it as the requester's note:\n%s", name, ps[0])
		}
	}
	if r.Report == nil {
		t.Fatal("no report")
	}
	if got := r.Report.Provenance.Steering; len(got) != 1 || !strings.HasPrefix(got[0], note+" (by U1 during search") {
		t.Errorf("provenance lists %q, want the note", got)
	}
	if !strings.Contains(r.Report.Markdown, "- Steering notes given while it ran (each applied from the next step):\n  - "+note+" (by U1 during search") {
		t.Errorf("the report's How this report was made does not list the note:\n%s", r.Report.Markdown)
	}
	if !slices.ContainsFunc(r.Report.Provenance.Trace, func(s string) bool { return strings.Contains(s, "steering note from U1: "+note) }) {
		t.Errorf("the trace does not list the note: %q", r.Report.Provenance.Trace)
	}
}

// TestSteeringIsBounded: empty and over-long notes are refused, a run takes
// at most MaxSteeringNotes, and a finished run takes none; nothing is
// recorded by a refusal.
func TestSteeringIsBounded(t *testing.T) {
	ctx := context.Background()
	m := &scripted{reviews: []pipeline.CritiqueOutput{passes}}
	eng, store := steeringEngine(t, m, web{})
	if _, err := eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := eng.Steer(ctx, "r-1", "U1", " \n "); !errors.Is(err, pipeline.ErrEmptyNote) {
		t.Errorf("empty note: %v, want ErrEmptyNote", err)
	}
	if _, _, err := eng.Steer(ctx, "r-1", "U1", strings.Repeat("é", pipeline.MaxSteeringNoteRunes+1)); !errors.Is(err, pipeline.ErrNoteTooLong) {
		t.Errorf("long note: %v, want ErrNoteTooLong", err)
	}
	if _, _, err := eng.Steer(ctx, "r-1", "U1", strings.Repeat("é", pipeline.MaxSteeringNoteRunes)); err != nil {
		t.Errorf("a note of exactly the limit: %v", err)
	}
	for i := 1; i < pipeline.MaxSteeringNotes; i++ {
		if _, _, err := eng.Steer(ctx, "r-1", "U1", "note"); err != nil {
			t.Fatalf("note %d: %v", i+1, err)
		}
	}
	if _, _, err := eng.Steer(ctx, "r-1", "U1", "one too many"); !errors.Is(err, pipeline.ErrTooManyNotes) {
		t.Errorf("note %d: %v, want ErrTooManyNotes", pipeline.MaxSteeringNotes+1, err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != pipeline.MaxSteeringNotes {
		t.Errorf("%d notes stored, want %d", len(r.Notes), pipeline.MaxSteeringNotes)
	}
	if !r.Status.Final() {
		t.Fatalf("run %s, want finished", r.Status)
	}
	if _, _, err := eng.Steer(ctx, "r-1", "U1", "too late"); !errors.Is(err, pipeline.ErrRunFinished) {
		t.Errorf("a note on a finished run: %v, want ErrRunFinished", err)
	}
}

// TestASteeringNoteGivenAtACheckpointAppliesAfterTheDecision: a run that
// waits for its plan review takes a note; the decision is still applied,
// and the steps after it carry the note.
func TestASteeringNoteGivenAtACheckpointAppliesAfterTheDecision(t *testing.T) {
	ctx := context.Background()
	m := &scripted{reviews: []pipeline.CritiqueOutput{passes}}
	eng, store := steeringEngine(t, m, web{})
	if _, err := eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusWaiting {
		t.Fatalf("run %s, want waiting at the plan review", r.Status)
	}
	waiting := r.Waiting
	if _, _, err := eng.Steer(ctx, "r-1", "U1", "focus on Europe"); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Decide(ctx, waiting, checkpoints.Decision{By: "U1", Action: checkpoints.Approve}); err != nil {
		t.Fatalf("the decision after a note: %v", err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	ps := m.sent("source_relevance")
	if len(ps) == 0 || !strings.Contains(ps[0], ">\nfocus on Europe\n</requester_note>") {
		t.Errorf("the ranking after the decision does not carry the note: %q", ps)
	}
	if p := m.sent("research_plan"); len(p) != 1 || strings.Contains(p[0], "requester_note") {
		t.Errorf("plan prompts %q: want one, made before the note", p)
	}
}
