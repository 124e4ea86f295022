package pipeline_test

import (
	"context"
	"errors"
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

// limiterDown is a searcher whose every backend call fails, while down is
// set, the way search.Multi reports it when the shared rate limiter cannot
// reach Redis (a worker cut off from Redis): the backend is never asked.
// With down unset it searches like web.
type limiterDown struct {
	web
	mu       sync.Mutex
	down     bool
	searches int
}

// limiterFailure is what the app's search adapter says of such a call (and
// it sets Interrupted, as the failure is ours, not the backend's).
const limiterFailure = "search backend searxng: the shared rate limiter failed: rate limit search:searxng: dial tcp 127.0.0.1:6379: connect: connection refused"

func (s *limiterDown) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	s.mu.Lock()
	down := s.down
	s.searches++
	s.mu.Unlock()
	if down {
		return pipeline.SearchOutcome{Errors: []string{limiterFailure}, Interrupted: errors.New(limiterFailure)}
	}
	return s.web.Search(ctx, q)
}

func (s *limiterDown) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

// newSearchEngine is an engine with the scripted model over searcher.
func newSearchEngine(t *testing.T, searcher pipeline.Searcher) (*pipeline.Engine, *redisstore.Store) {
	t.Helper()
	return newSearchEngineShowing(t, searcher, &presenter{})
}

// newSearchEngineShowing is newSearchEngine with the run shown by p.
func newSearchEngineShowing(t *testing.T, searcher pipeline.Searcher, p pipeline.Presenter) (*pipeline.Engine, *redisstore.Store) {
	t.Helper()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{reviews: []pipeline.CritiqueOutput{passes}}, Searcher: searcher, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": p}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.SeedDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(context.Background(), pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
	}); err != nil {
		t.Fatal(err)
	}
	return eng, store
}

// TestSearchesOurLimiterCouldNotAllowAreRetriedNotCountedAsFailed: a worker
// cut off from Redis cannot ask the shared rate limiter, so every backend
// call of the search step fails without reaching a backend. That is not the
// sources' failure: the step fails and is tried again (within its attempts),
// no search is recorded as failed, and the retry, with Redis back, finds the
// sources. Before, the run stopped searching and ended partial with "the
// searches found no sources".
func TestSearchesOurLimiterCouldNotAllowAreRetriedNotCountedAsFailed(t *testing.T) {
	ctx := context.Background()
	searcher := &limiterDown{down: true}
	eng, store := newSearchEngine(t, searcher)

	var re *pipeline.RetryError
	if err := eng.Advance(ctx, "r-1"); !errors.As(err, &re) || re.Step != pipeline.StepSearch || re.Attempt != 1 {
		r, _ := store.Load(ctx, "r-1")
		t.Fatalf("with the limiter down: %v (run %s, %q), want a RetryError of the search step's first attempt", err, r.Status, r.FallbackReason)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range r.Queries {
		if q.Status != "pending" {
			t.Errorf("query %s %q is %s after the interrupted attempt, want pending", q.ID, q.Text, q.Status)
		}
	}
	if r.Step != pipeline.StepSearch || len(r.Sources) != 0 || r.Spend.Searches != 0 {
		t.Errorf("step %s, %d sources, %d searches spent: the interrupted attempt left traces", r.Step, len(r.Sources), r.Spend.Searches)
	}
	if !strings.Contains(r.Attempt.LastError, "rate limiter") {
		t.Errorf("the attempt's cause %q does not name the rate limiter", r.Attempt.LastError)
	}

	searcher.setDown(false)
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err = store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted || r.FallbackReason != "" || len(r.Sources) == 0 {
		t.Fatalf("after Redis came back the run is %s (%q) with %d sources, want completed with sources", r.Status, r.FallbackReason, len(r.Sources))
	}
}

// backendsDown is a searcher whose backends themselves fail: a genuine
// outage of the sources.
type backendsDown struct{}

func (backendsDown) Search(context.Context, pipeline.SearchRequest) pipeline.SearchOutcome {
	return pipeline.SearchOutcome{Errors: []string{"search backend searxng: unexpected status 503 Service Unavailable"}}
}

// TestAGenuineBackendOutageStillCountsAsFailedSearches: when the backends
// answer with errors, the searches are recorded as failed, the run stops
// searching at MaxSearchErrors and ends saying the searches found nothing —
// no step retry.
func TestAGenuineBackendOutageStillCountsAsFailedSearches(t *testing.T) {
	ctx := context.Background()
	eng, store := newSearchEngine(t, backendsDown{})
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatalf("a backend outage failed a step: %v", err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, q := range r.Queries {
		if q.Status == "failed" {
			failed++
		}
	}
	if failed == 0 || r.FallbackReason != "the searches found no sources" || r.Status != pipeline.StatusPartial {
		t.Fatalf("%d failed searches, status %s, fallback %q: a backend outage must count as failed searches", failed, r.Status, r.FallbackReason)
	}
}

// TestSearchesInterruptedOnEveryAttemptEndTheRunWithTheCause: the retries
// are bounded by the step's attempts; a limiter that never comes back ends
// the run failed, saying the search step failed and why — not as a run whose
// searches found nothing.
func TestSearchesInterruptedOnEveryAttemptEndTheRunWithTheCause(t *testing.T) {
	ctx := context.Background()
	searcher := &limiterDown{down: true}
	eng, store := newSearchEngine(t, searcher)
	for attempt := 1; attempt < pipeline.MaxStepAttempts; attempt++ {
		var re *pipeline.RetryError
		if err := eng.Advance(ctx, "r-1"); !errors.As(err, &re) || re.Attempt != attempt {
			t.Fatalf("attempt %d: %v, want a RetryError", attempt, err)
		}
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	want := "the search step failed 3 times: "
	if r.Status != pipeline.StatusFailed || !strings.HasPrefix(r.Failure, want) || !strings.Contains(r.Failure, "the shared rate limiter failed") {
		t.Fatalf("status %s, failure %q: want failed, %q… naming the limiter", r.Status, r.Failure, want)
	}
	if searcher.searches != pipeline.MaxStepAttempts*len(r.Queries) {
		t.Errorf("%d searches for %d queries over %d attempts", searcher.searches, len(r.Queries), pipeline.MaxStepAttempts)
	}
}

// heldBack is a searcher whose searches our shared rate limit holds back
// (SearchOutcome.Paced) — every one while all is set, otherwise only the
// first of each attempt — and that searches like web otherwise.
type heldBack struct {
	web
	mu    sync.Mutex
	all   bool
	calls int
}

const heldBackError = "search backend searxng: the shared rate limit had no room within 5s (retry after 2s)"

func (s *heldBack) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	s.mu.Lock()
	s.calls++
	hold := s.all || s.calls == 1
	s.mu.Unlock()
	if hold {
		return pipeline.SearchOutcome{Errors: []string{heldBackError}, Paced: errors.New(heldBackError)}
	}
	return s.web.Search(ctx, q)
}

// TestASearchStepOurRateLimitHeldBackEntirelyIsRetried: when our own
// shared rate limit held back every search of the step (many runs at
// once), nothing was searched: the step fails and is tried again after the
// rate limit's backoff (HeldBackRetryDelay), and the
// run does not end with "the searches found no sources". When only some
// were held back, the others' results are used and the step goes on.
func TestASearchStepOurRateLimitHeldBackEntirelyIsRetried(t *testing.T) {
	ctx := context.Background()
	searcher := &heldBack{all: true}
	eng, store := newSearchEngine(t, searcher)
	var re *pipeline.RetryError
	if err := eng.Advance(ctx, "r-1"); !errors.As(err, &re) || re.Step != pipeline.StepSearch {
		r, _ := store.Load(ctx, "r-1")
		t.Fatalf("every search held back: %v (run %s, %q), want a RetryError of the search step", err, r.Status, r.FallbackReason)
	}
	// Our budget refills with time, not with asking sooner: the retry waits
	// the rate limit's backoff, not a failed step's.
	if want := pipeline.HeldBackRetryDelay(1); re.After != want || want <= pipeline.StepRetryDelay(1) {
		t.Errorf("a step held back entirely is tried again after %v, want %v (longer than a failed step's %v)", re.After, want, pipeline.StepRetryDelay(1))
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Attempt.LastError, "rate limit had no room") || len(r.Sources) != 0 {
		t.Errorf("the attempt's cause %q (want our rate limit named), %d sources", r.Attempt.LastError, len(r.Sources))
	}

	searcher.mu.Lock()
	searcher.all, searcher.calls = false, 0
	searcher.mu.Unlock()
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err = store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted || r.FallbackReason != "" || len(r.Sources) == 0 {
		t.Fatalf("with one search held back the run is %s (%q) with %d sources, want completed with sources", r.Status, r.FallbackReason, len(r.Sources))
	}
}

// TestAStepOurRateLimitHoldsBackUsesNoAttemptForAWhile: a search step
// whose every search our own shared rate limit held back tried nothing, so
// it uses up none of its attempts for MaxHeldBackRounds rounds, each
// waiting longer (HeldBackRetryDelay: the budget refills with time), and
// then goes on as soon as the budget has room; a budget that stays spent
// past those rounds uses up the attempts and ends the run with the cause.
func TestAStepOurRateLimitHoldsBackUsesNoAttemptForAWhile(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		freedAfter  int // rounds held back before the budget has room; -1: never
		wantStatus  pipeline.Status
		wantRetries int
	}{
		{"the budget frees up after the last free round", pipeline.MaxHeldBackRounds, pipeline.StatusCompleted, pipeline.MaxHeldBackRounds},
		{"the budget stays spent", -1, pipeline.StatusFailed, pipeline.MaxHeldBackRounds + pipeline.MaxStepAttempts - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			searcher := &heldBack{all: true}
			shows := &noticesShown{presenter: &presenter{}}
			eng, store := newSearchEngineShowing(t, searcher, shows)
			retries := 0
			for {
				if retries == tc.freedAfter {
					searcher.mu.Lock()
					searcher.all, searcher.calls = false, 1 // nothing held back any more
					searcher.mu.Unlock()
				}
				err := eng.Advance(ctx, "r-1")
				var re *pipeline.RetryError
				if !errors.As(err, &re) {
					if err != nil {
						t.Fatal(err)
					}
					break
				}
				retries++
				r, lerr := store.Load(ctx, "r-1")
				if lerr != nil {
					t.Fatal(lerr)
				}
				if retries <= pipeline.MaxHeldBackRounds {
					// People are told the step waits, not that it failed.
					if n := shows.last(); !strings.Contains(n, "the search step is waiting") || strings.Contains(n, "failed") {
						t.Fatalf("held back %d times, people were told %q", retries, n)
					}
					if r.Attempt.N != 0 || r.Attempt.HeldBack != retries || re.After != pipeline.HeldBackRetryDelay(retries) {
						t.Fatalf("held back %d times: attempts used %d, rounds %d, next try after %v; want 0, %d, %v",
							retries, r.Attempt.N, r.Attempt.HeldBack, re.After, retries, pipeline.HeldBackRetryDelay(retries))
					}
				} else if r.Attempt.N != retries-pipeline.MaxHeldBackRounds {
					t.Fatalf("held back %d times: attempts used %d, want %d", retries, r.Attempt.N, retries-pipeline.MaxHeldBackRounds)
				}
				if retries > pipeline.MaxHeldBackRounds+pipeline.MaxStepAttempts {
					t.Fatal("the run never ends")
				}
			}
			r, err := store.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			if retries != tc.wantRetries || r.Status != tc.wantStatus {
				t.Fatalf("%d retries, run %s (%q); want %d, %s", retries, r.Status, r.Failure, tc.wantRetries, tc.wantStatus)
			}
			if tc.wantStatus == pipeline.StatusFailed && !strings.Contains(r.Failure, "the search step failed 3 times") {
				t.Errorf("failure %q: want the search step's attempts named", r.Failure)
			}
			if tc.wantStatus == pipeline.StatusCompleted && len(r.Errors) != 0 {
				t.Errorf("a run our rate limit only made wait recorded errors: %+v", r.Errors)
			}
		})
	}
}

// noticesShown is a presenter that keeps the notices people were shown.
type noticesShown struct {
	*presenter
	mu      sync.Mutex
	notices []string
}

func (p *noticesShown) Notice(_ context.Context, _ *pipeline.Run, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notices = append(p.notices, text)
}

// last is the latest notice shown ("" for none).
func (p *noticesShown) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.notices) == 0 {
		return ""
	}
	return p.notices[len(p.notices)-1]
}
