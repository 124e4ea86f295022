package pipeline_test

import (
	"context"
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

// savingStore is the real store, counting saves and probes.
type savingStore struct {
	*redisstore.Store
	mu     sync.Mutex
	saves  int
	probes int
}

func (s *savingStore) ProbeForStep(ctx context.Context, id string) (pipeline.StepProbe, error) {
	s.mu.Lock()
	s.probes++
	s.mu.Unlock()
	return s.Store.ProbeForStep(ctx, id)
}

func (s *savingStore) Save(ctx context.Context, r *pipeline.Run) error {
	s.mu.Lock()
	s.saves++
	s.mu.Unlock()
	return s.Store.Save(ctx, r)
}

// stepsDone counts the steps the engine ran (Observer), and the local ones
// (output, fallback) among them.
type stepsDone struct {
	mu    sync.Mutex
	n     int
	local int
}

func (o *stepsDone) StepDone(s pipeline.Step, _ time.Duration, _ error) {
	o.mu.Lock()
	o.n++
	if s == pipeline.StepOutput || s == pipeline.StepFallback {
		o.local++
	}
	o.mu.Unlock()
}
func (o *stepsDone) LLMUsage(pipeline.Role, pipeline.Usage)                      {}
func (o *stepsDone) RunFinished(pipeline.Status)                                 {}
func (o *stepsDone) CheckpointDecided(string, checkpoints.Action, time.Duration) {}

// attemptWatcher is a searcher that reads the stored run while the search
// step runs: what a worker that takes over after a crash would find.
type attemptWatcher struct {
	web
	store *redisstore.Store
	mu    sync.Mutex
	seen  []pipeline.StepAttempt
}

func (a *attemptWatcher) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	if r, err := a.store.Load(ctx, "r-1"); err == nil {
		a.mu.Lock()
		a.seen = append(a.seen, r.Attempt)
		a.mu.Unlock()
	}
	return a.web.Search(ctx, q)
}

// TestEachStepIsSavedOnceAndItsAttemptIsStoredBeforeItRuns: a worker that
// carries a run through its steps saves (and probes) once per step — the save that ends
// a step also counts the attempt at the next — and the attempt at a step is
// in the store while the step runs, so a worker that dies in the middle of
// it has used that attempt (the bound on attempts holds across crashes).
// The report, built from the run in hand (the output step, a local one), is
// built in the review's save: no save of its own.
//
// A presenter that shows nothing when the run finishes (the terminal's,
// pipeline.SilentFinisher) has the run's end saved as shown in the step's
// own save: one save fewer, and Finished is still called.
func TestEachStepIsSavedOnceAndItsAttemptIsStoredBeforeItRuns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		silent bool
	}{{"a presenter that shows the outcome", false}, {"a presenter that finishes silently", true}} {
		t.Run(tc.name, func(t *testing.T) { testStepSaves(t, tc.silent) })
	}
}

// silentPresenter is presenter, finishing silently (pipeline.SilentFinisher).
type silentPresenter struct{ *presenter }

func (silentPresenter) FinishesSilently() bool { return true }

func testStepSaves(t *testing.T, silent bool) {
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	ss := &savingStore{Store: store}
	steps := &stepsDone{}
	searcher := &attemptWatcher{store: store}
	shows := &presenter{}
	var p pipeline.Presenter = shows
	if silent {
		p = silentPresenter{shows}
	}
	eng, err := pipeline.New(pipeline.Config{
		Store: ss, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{reviews: []pipeline.CritiqueOutput{passes}}, Searcher: searcher, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": p}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" }, Observer: steps,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
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
	r, err := store.Load(ctx, "r-1")
	if err != nil || r.Status != pipeline.StatusCompleted {
		t.Fatalf("the run is %v (%v), want completed", r, err)
	}
	// The first step's attempt, one save per step but the local one, and
	// the record that the outcome was shown (in the last step's save when
	// nothing is shown).
	if steps.local != 1 {
		t.Fatalf("%d local steps ran, want 1 (the output)", steps.local)
	}
	want := steps.n - steps.local + 2
	if silent {
		want--
	}
	if ss.saves != want {
		t.Errorf("%d saves for %d steps (%d local), want %d", ss.saves, steps.n, steps.local, want)
	}
	if !r.Presented {
		t.Error("the stored run is not marked shown")
	}
	if n := len(shows.finished); n != 1 {
		t.Errorf("Finished was called %d times, want once", n)
	}
	// No probe between steps (each step's save said how the run stood:
	// Run.SaveProbe), and one after the lease is released (a run finished
	// and shown is not probed again under the lease).
	if ss.probes != 1 {
		t.Errorf("%d probes for %d steps, want 1 (after the lease is released)", ss.probes, steps.n)
	}
	if len(searcher.seen) == 0 {
		t.Fatal("nothing was searched")
	}
	for _, a := range searcher.seen {
		if a.Step != pipeline.StepSearch || a.N != 1 {
			t.Errorf("while the search step ran, the stored attempt was %+v, want search, 1", a)
		}
	}
}

// seedCountingStore is the real store, counting the reads of the checkpoint
// definitions.
type seedCountingStore struct {
	*redisstore.Store
	mu    sync.Mutex
	reads int
}

func (s *seedCountingStore) Definitions(ctx context.Context) ([]checkpoints.Definition, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	return s.Store.Definitions(ctx)
}

func (s *seedCountingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// TestANewRunSeedsTheDefinitionsUnlessTheyWereJustSeeded: a run created
// less than a second after the built-in definitions were seeded (a
// terminal run's process seeds at start) does not read them again; later
// a new run seeds again, and puts back built-ins that went missing.
func TestANewRunSeedsTheDefinitionsUnlessTheyWereJustSeeded(t *testing.T) {
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	ds := &seedCountingStore{Store: redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})}
	clock := researchtest.NewClock(t0)
	n := 0
	eng, err := pipeline.New(pipeline.Config{
		Store: ds, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{}, Searcher: web{}, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: clock,
		NewID: func() string { n++; return "r-" + string(rune('0'+n)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	start := func() {
		t.Helper()
		if _, err := eng.Start(ctx, pipeline.Request{
			Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
			Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
		}); err != nil {
			t.Fatal(err)
		}
	}
	start()
	if got := ds.count(); got != 1 {
		t.Errorf("the definitions were read %d times, want once (at the seeding, not again for the run created at once)", got)
	}
	if err := rdb.Del(ctx, "rb:defs").Err(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	start()
	if got := ds.count(); got != 2 {
		t.Errorf("the definitions were read %d times, want twice (a run a second later seeds again)", got)
	}
	defs, err := ds.Store.Definitions(ctx)
	if err != nil || len(defs) == 0 {
		t.Errorf("the emptied definitions were not put back: %d (%v)", len(defs), err)
	}
}

// TestSeedingAFreshStoreIsOneStep: the built-in definitions go into a
// store that holds none in one script (no HSETNX each), and into one
// that holds some one by one, keeping what is there.
func TestSeedingAFreshStoreIsOneStep(t *testing.T) {
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{}, Searcher: web{}, Fetcher: web{}, Clock: researchtest.NewClock(t0),
	})
	if err != nil {
		t.Fatal(err)
	}
	hsetnx := func() string {
		t.Helper()
		info, err := rdb.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_hsetnx:calls="); ok {
				n, _, _ := strings.Cut(rest, ",")
				return n
			}
		}
		return "0"
	}
	if err := eng.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	builtins := checkpoints.Builtins(t0)
	defs, err := store.Definitions(ctx)
	if err != nil || len(defs) != len(builtins) {
		t.Fatalf("%d definitions (%v), want %d", len(defs), err, len(builtins))
	}
	if n := hsetnx(); n != "0" {
		t.Errorf("seeding a fresh store sent %s HSETNX, want none (one script)", n)
	}
	if err := rdb.HDel(ctx, "rb:defs", builtins[0].ID).Err(); err != nil {
		t.Fatal(err)
	}
	if err := eng.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	if n := hsetnx(); n != "1" {
		t.Errorf("seeding a store missing one built-in sent %s HSETNX, want 1", n)
	}
	if defs, err := store.Definitions(ctx); err != nil || len(defs) != len(builtins) {
		t.Errorf("%d definitions (%v), want %d", len(defs), err, len(builtins))
	}
}
