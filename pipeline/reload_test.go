package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// countingStore is the real store, counting the reads of a whole run and
// the version probes. between, when set, replaces once the save that ends
// the plan step; write is that save, which between makes itself, so it can
// act just before it or just after it (at the step boundary: the worker
// has saved and not yet probed).
type countingStore struct {
	*redisstore.Store
	mu      sync.Mutex
	loads   int // Load and LoadForStep
	probes  int
	between func(r *pipeline.Run, write func() error) error
}

func (s *countingStore) Load(ctx context.Context, id string) (*pipeline.Run, error) {
	s.count(&s.loads)
	return s.Store.Load(ctx, id)
}

func (s *countingStore) LoadForStep(ctx context.Context, id string) (*pipeline.Run, string, error) {
	s.count(&s.loads)
	return s.Store.LoadForStep(ctx, id)
}

func (s *countingStore) ProbeForStep(ctx context.Context, id string) (pipeline.StepProbe, error) {
	s.count(&s.probes)
	return s.Store.ProbeForStep(ctx, id)
}

func (s *countingStore) Save(ctx context.Context, r *pipeline.Run) error {
	s.mu.Lock()
	between := s.between
	if r.Step == pipeline.StepSearch {
		s.between = nil // the plan step's end (the first save at search): once
	} else {
		between = nil
	}
	s.mu.Unlock()
	if between == nil {
		return s.Store.Save(ctx, r)
	}
	return between(r, func() error { return s.Store.Save(ctx, r) })
}

func (s *countingStore) count(n *int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*n++
}

func (s *countingStore) counts() (loads, probes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads, s.probes
}

// searches records the query texts searched.
type searches struct {
	web
	mu    sync.Mutex
	texts []string
}

func (s *searches) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	s.mu.Lock()
	s.texts = append(s.texts, q.Text)
	s.mu.Unlock()
	return s.web.Search(ctx, q)
}

func (s *searches) searched() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.texts)
}

// TestAWorkerReadsTheRunAgainWhenAnyoneElseSavedItBetweenItsSteps: a
// worker that saved the run after a step keeps its copy for the next step
// only while it is the stored run. The save that ends a step reads the
// stored version, nonce and cancel request in the same step as its write
// (Run.SaveProbe), so the worker going straight on asks Redis nothing at
// the boundary. Around the save that ends the plan step (one Advance of
// an auto-mode run) another writer asks to cancel, edits the run, or Redis
// loses the worker's save (a failover to a replica that was behind):
// made before that save, the save sees it (its reply, or its
// compare-and-set); made after it, the next save does — a cancel request
// stops the run at the next boundary, as one made during a step, and a
// write the worker did not make fails its next compare-and-set (version
// and nonce), so nothing is overwritten and the next advance reads the run
// again. When nobody else wrote, the run is not read again.
func TestAWorkerReadsTheRunAgainWhenAnyoneElseSavedItBetweenItsSteps(t *testing.T) {
	ctx := context.Background()
	const edited = "heat pump edited by another writer"
	cancel := func(store *redisstore.Store) error { return store.RequestCancel(ctx, "r-1", "U2") }
	edit := func(store *redisstore.Store) error {
		r, err := store.Load(ctx, "r-1")
		if err != nil {
			return err
		}
		r.Queries[0].Text = edited
		return store.Save(ctx, r)
	}
	cancelledBeforeSearch := func(t *testing.T, _ *scripted, s *searches, r *pipeline.Run) {
		if r.CancelledBy != "U2" {
			t.Errorf("cancelled by %q, want U2", r.CancelledBy)
		}
		if got := s.searched(); len(got) != 0 {
			t.Errorf("searched %q after the cancel request, want nothing", got)
		}
	}
	searchedTheEdit := func(t *testing.T, _ *scripted, s *searches, r *pipeline.Run) {
		if got := s.searched(); !slices.Contains(got, edited) {
			t.Errorf("searched %q, want the query another writer saved (%q): the worker kept its stale copy", got, edited)
		}
		if r.Queries[0].Text != edited {
			t.Errorf("the stored query is %q, want %q: the worker's save overwrote the other writer's", r.Queries[0].Text, edited)
		}
	}
	for _, tc := range []struct {
		name string
		// between acts around the plan step's save; write is that save.
		between func(store *redisstore.Store, rdb *redis.Client, write func() error) error
		status  pipeline.Status
		// conflict: the first Advance ends with ErrConflict (its next save
		// met a write it did not make) and a second one finishes the run.
		conflict bool
		// loads is the whole-run reads during an Advance that does not
		// conflict: one on taking the lease, one for each time the worker
		// had to read the run again, and one after releasing it (work
		// that arrived meanwhile) unless the run it ended with finished
		// and shown is, by a probe, still the stored one.
		loads int
		check func(t *testing.T, m *scripted, s *searches, r *pipeline.Run)
	}{
		{name: "nobody else saved: the copy in hand is used", status: pipeline.StatusCompleted, loads: 1,
			check: func(t *testing.T, m *scripted, _ *searches, _ *pipeline.Run) {
				if n := len(m.sent("research_plan")); n != 1 {
					t.Errorf("the plan was asked %d times, want once", n)
				}
			}},
		{name: "a cancel request before the save: its reply stops the run before the next step",
			between: func(store *redisstore.Store, _ *redis.Client, write func() error) error {
				if err := cancel(store); err != nil {
					return err
				}
				return write()
			},
			status: pipeline.StatusCancelled, loads: 2, check: cancelledBeforeSearch},
		{name: "a cancel request after the save: the run stops at the next boundary",
			between: func(store *redisstore.Store, _ *redis.Client, write func() error) error {
				if err := write(); err != nil {
					return err
				}
				return cancel(store)
			},
			status: pipeline.StatusCancelled, loads: 2,
			check: func(t *testing.T, m *scripted, s *searches, r *pipeline.Run) {
				if r.CancelledBy != "U2" {
					t.Errorf("cancelled by %q, want U2", r.CancelledBy)
				}
				if r.Step != pipeline.StepDone || r.Report != nil || len(m.sent("analysis")) != 0 {
					t.Errorf("the run went on to %s (report %v) after the cancel request, want it stopped after the search step", r.Step, r.Report != nil)
				}
			}},
		{name: "another writer saved the run before the save: the save loses, the next advance reads its change",
			between: func(store *redisstore.Store, _ *redis.Client, write func() error) error {
				r, err := store.Load(ctx, "r-1")
				if err != nil {
					return err
				}
				r.Context = edited
				if err := store.Save(ctx, r); err != nil {
					return err
				}
				return write()
			},
			status: pipeline.StatusCompleted, conflict: true,
			check: func(t *testing.T, m *scripted, _ *searches, r *pipeline.Run) {
				if r.Context != edited {
					t.Errorf("the stored context is %q, want %q: the worker's save overwrote the other writer's", r.Context, edited)
				}
				if n := len(m.sent("research_plan")); n != 2 {
					t.Errorf("the plan was asked %d times, want twice (once more on the other writer's run)", n)
				}
			}},
		{name: "another writer saved the run after the save: the next save loses, the next advance reads its change",
			between: func(store *redisstore.Store, _ *redis.Client, write func() error) error {
				if err := write(); err != nil {
					return err
				}
				return edit(store)
			},
			status: pipeline.StatusCompleted, conflict: true, check: searchedTheEdit},
		{name: "the stored version went back: the lost step is done again",
			between: func(_ *redisstore.Store, rdb *redis.Client, write func() error) error {
				// Redis acknowledges the save, then loses it: the run's hash
				// is put back as it was before (as a failover to a replica
				// that had not received the write).
				before, err := rdb.Dump(ctx, "rb:run:r-1").Result()
				if err != nil {
					return err
				}
				if err := write(); err != nil {
					return err
				}
				return rdb.RestoreReplace(ctx, "rb:run:r-1", 0, before).Err()
			},
			status: pipeline.StatusCompleted, conflict: true,
			check: func(t *testing.T, m *scripted, _ *searches, r *pipeline.Run) {
				if n := len(m.sent("research_plan")); n != 2 {
					t.Errorf("the plan was asked %d times, want twice (once more after its save was lost)", n)
				}
				if r.Plan == nil || len(r.Queries) == 0 {
					t.Errorf("the finished run has plan %v and %d queries, want the plan done again", r.Plan, len(r.Queries))
				}
			}},
		{name: "the save was lost and another writer saved the same version: the next save loses, the change is kept",
			between: func(store *redisstore.Store, rdb *redis.Client, write func() error) error {
				// The worker's save is lost as above; then another writer
				// saves the run it finds, which brings the stored version
				// back to the number the worker holds, with other contents.
				before, err := rdb.Dump(ctx, "rb:run:r-1").Result()
				if err != nil {
					return err
				}
				if err := write(); err != nil {
					return err
				}
				if err := rdb.RestoreReplace(ctx, "rb:run:r-1", 0, before).Err(); err != nil {
					return err
				}
				r, err := store.Load(ctx, "r-1")
				if err != nil {
					return err
				}
				r.Context = edited
				return store.Save(ctx, r)
			},
			status: pipeline.StatusCompleted, conflict: true,
			check: func(t *testing.T, m *scripted, _ *searches, r *pipeline.Run) {
				if r.Context != edited {
					t.Errorf("the stored context is %q, want %q: the worker kept its copy of the same version number and overwrote the other writer's save", r.Context, edited)
				}
				if n := len(m.sent("research_plan")); n != 2 {
					t.Errorf("the plan was asked %d times, want twice (once more after its save was lost)", n)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rdb := redistest.Start(t)
			store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
			cs := &countingStore{Store: store}
			m := &scripted{reviews: []pipeline.CritiqueOutput{passes}}
			s := &searches{}
			eng, err := pipeline.New(pipeline.Config{
				Store: cs, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
				Model: m, Searcher: s, Fetcher: web{},
				Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
				NewID: func() string { return "r-1" },
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
			hooked := false
			if tc.between != nil {
				cs.between = func(_ *pipeline.Run, write func() error) error {
					hooked = true
					return tc.between(store, rdb, write)
				}
			}
			loads0, _ := cs.counts()
			err = eng.Advance(ctx, "r-1")
			if tc.between != nil && !hooked {
				t.Fatal("the plan step's save was never seen: the test acted at no step boundary")
			}
			if tc.conflict {
				if !errors.Is(err, pipeline.ErrConflict) {
					t.Fatalf("the first Advance = %v, want ErrConflict: the worker wrote over, or went on past, a write it did not make", err)
				}
				err = eng.Advance(ctx, "r-1")
			}
			if err != nil {
				t.Fatal(err)
			}
			if loads, _ := cs.counts(); !tc.conflict && loads-loads0 != tc.loads {
				t.Errorf("the run was read %d times during the Advance, want %d", loads-loads0, tc.loads)
			}
			r, err := store.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status {
				t.Fatalf("the run is %s at %s (%s), want %s", r.Status, r.Step, r.FallbackReason, tc.status)
			}
			tc.check(t, m, s, r)
		})
	}
}
