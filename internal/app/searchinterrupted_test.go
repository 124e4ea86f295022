package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/search"
)

// countingBackend answers every search with one result, or with err (or
// its context's end).
type countingBackend struct {
	calls atomic.Int64
	err   error
}

func (*countingBackend) Name() string         { return "searxng" }
func (*countingBackend) Kinds() []search.Kind { return []search.Kind{search.KindWeb} }
func (b *countingBackend) Search(ctx context.Context, _ search.Query) ([]search.Result, error) {
	b.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	return []search.Result{{URL: "https://example.org/a", Title: "A"}}, nil
}

// redisDown is a rate budget whose store cannot be reached, as
// redisstore.RateLimiter answers on a worker cut off from Redis.
type redisDown struct{}

func (redisDown) AllowN(context.Context, string, int, int, time.Duration) (time.Duration, error) {
	return 0, errors.New("rate limit search:searxng: dial tcp 127.0.0.1:6379: connect: connection refused")
}

func adapterOver(b search.Backend, budget search.RateBudget) *searcher {
	opts := search.Options{}
	if budget != nil {
		opts.Limiter = search.NewSharedLimiter(budget, map[string]int{"searxng": 600})
	}
	return &searcher{multi: search.NewMulti([]search.Backend{b}, opts), clock: quartz.NewReal(), backends: []string{b.Name()}, calls: ignoreCalls{}}
}

// TestASearchOurLimiterCouldNotAllowIsInterrupted: when the shared rate
// limiter cannot reach Redis the backend is never asked, and the outcome
// says the search was interrupted by our own infrastructure (so the
// pipeline retries the step instead of counting a failed search); a
// backend's own failure is not an interruption.
func TestASearchOurLimiterCouldNotAllowIsInterrupted(t *testing.T) {
	ctx := context.Background()
	req := pipeline.SearchRequest{Text: "heat pumps in the cold", Kind: "web"}

	b := &countingBackend{}
	out := adapterOver(b, redisDown{}).Search(ctx, req)
	if out.Interrupted == nil || !errors.Is(out.Interrupted, search.ErrLimiterFailed) || b.calls.Load() != 0 || len(out.Errors) != 1 {
		t.Fatalf("limiter down: interrupted %v, %d backend calls, errors %q; want ErrLimiterFailed, no call, the error listed", out.Interrupted, b.calls.Load(), out.Errors)
	}

	outage := &countingBackend{err: &search.StatusError{StatusCode: 503}}
	out = adapterOver(outage, nil).Search(ctx, req)
	if out.Interrupted != nil || len(out.Errors) != 1 {
		t.Fatalf("backend outage: interrupted %v, errors %q; want a backend error that is not an interruption", out.Interrupted, out.Errors)
	}

	cancelled, cancel := context.WithCancelCause(ctx)
	cancel(errors.New("lease lost"))
	out = adapterOver(&countingBackend{}, nil).Search(cancelled, req)
	if out.Interrupted == nil || out.Interrupted.Error() != "the search was cancelled: lease lost" {
		t.Fatalf("cancelled search: interrupted %v, want the cancellation's cause", out.Interrupted)
	}

	joined := joinSearchers(stubSearcher{Hits: []pipeline.Hit{{URL: "https://example.org/b"}}}, []pipeline.Searcher{adapterOver(&countingBackend{}, redisDown{})}).Search(ctx, req)
	if !errors.Is(joined.Interrupted, search.ErrLimiterFailed) {
		t.Fatalf("joined searchers lost the interruption: %v", joined.Interrupted)
	}
}

// fullBudget is a rate budget with no room for a minute, as
// redisstore.RateLimiter answers when every replica together has spent it.
type fullBudget struct{}

func (fullBudget) AllowN(context.Context, string, int, int, time.Duration) (time.Duration, error) {
	return time.Minute, nil
}

// TestASearchOurRateLimitHeldBackIsPaced: when our own shared rate limit
// has no room within the wait (many runs at once), the backend is never
// asked and a search that found nothing says so (Paced, not a backend's
// failure), so a step none of whose searches could be made is tried again
// instead of the run ending with "the searches found no sources" (the
// soak's finding); beside another backend's hits, the hits are kept and
// nothing is held back.
func TestASearchOurRateLimitHeldBackIsPaced(t *testing.T) {
	ctx := context.Background()
	req := pipeline.SearchRequest{Text: "heat pumps in the cold", Kind: "web"}

	b := &countingBackend{}
	out := adapterOver(b, fullBudget{}).Search(ctx, req)
	if out.Paced == nil || !errors.Is(out.Paced, search.ErrBudgetSpent) || out.Interrupted != nil || b.calls.Load() != 0 || len(out.Errors) != 1 {
		t.Fatalf("budget full: paced %v, interrupted %v, %d backend calls, errors %q; want ErrBudgetSpent, no call, the error listed", out.Paced, out.Interrupted, b.calls.Load(), out.Errors)
	}

	two := &searcher{multi: search.NewMulti([]search.Backend{&countingBackend{}, &namedBackend{countingBackend{}, "wikipedia"}}, search.Options{
		Limiter: search.NewSharedLimiter(onlyFor{"searxng"}, map[string]int{"searxng": 600, "wikipedia": 600}),
	}), clock: quartz.NewReal(), backends: []string{"searxng", "wikipedia"}, calls: ignoreCalls{}}
	out = two.Search(ctx, req)
	if out.Paced != nil || out.Interrupted != nil || len(out.Hits) == 0 || len(out.Errors) != 1 {
		t.Fatalf("one backend's budget full, another answered: paced %v, interrupted %v, %d hits, errors %q; want the hits, the error listed, nothing held back", out.Paced, out.Interrupted, len(out.Hits), out.Errors)
	}

	joined := joinSearchers(stubSearcher{Hits: []pipeline.Hit{{URL: "https://example.org/b"}}}, []pipeline.Searcher{adapterOver(&countingBackend{}, fullBudget{})}).Search(ctx, req)
	if joined.Paced != nil {
		t.Fatalf("joined with a searcher that found something: paced %v, want nothing held back", joined.Paced)
	}
	joined = joinSearchers(adapterOver(&countingBackend{}, fullBudget{}), []pipeline.Searcher{adapterOver(&countingBackend{}, fullBudget{})}).Search(ctx, req)
	if !errors.Is(joined.Paced, search.ErrBudgetSpent) {
		t.Fatalf("joined searchers all held back: paced %v, want ErrBudgetSpent", joined.Paced)
	}
}

// namedBackend is a countingBackend under another name.
type namedBackend struct {
	countingBackend
	name string
}

func (b *namedBackend) Name() string { return b.name }

// onlyFor is a budget full for one backend and open for the others.
type onlyFor struct{ full string }

func (o onlyFor) AllowN(_ context.Context, key string, _, _ int, _ time.Duration) (time.Duration, error) {
	if strings.HasSuffix(key, o.full) {
		return time.Minute, nil
	}
	return 0, nil
}
