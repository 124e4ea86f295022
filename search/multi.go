package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/dedup"
)

// Limiter decides whether a backend may be called now (SharedLimiter).
// Allow returns 0 when the call is allowed, otherwise how long to wait.
// AllowN takes n calls to backend at once, all or none: 0 when all were
// taken, otherwise how long to wait, and none was taken (Multi.Reserve).
type Limiter interface {
	Allow(ctx context.Context, backend string) (retryAfter time.Duration, err error)
	AllowN(ctx context.Context, backend string, n int) (retryAfter time.Duration, err error)
}

// Options tune a Multi.
type Options struct {
	// Concurrency bounds how many backends are queried at once; 0 means
	// all that serve the query (each is paced by its own rate limit).
	Concurrency int
	// Timeout bounds each backend's search (including a wait for the
	// limiter); 0 means 20 s.
	Timeout time.Duration
	// Limiter, when set, is asked before each backend call. A refusal
	// becomes a rate-limited BackendError; a limiter failure becomes a
	// BackendError too (the backend is not called), whose cause is
	// ErrLimiterFailed.
	Limiter Limiter
	// MaxWait is how long a search may wait for the limiter to allow a call
	// (within Timeout) instead of failing at once; 0 means do not wait.
	MaxWait time.Duration
	// Clock times the cooldowns the services ask for and runs the wait for
	// the limiter (timers tagged "search", "limiter"); nil means the real
	// clock.
	Clock quartz.Clock
}

// Multi searches several backends at once. It is safe for concurrent use.
type Multi struct {
	backends []Backend
	opts     Options

	mu sync.Mutex
	// cooldown holds, per backend, the time before which the service itself
	// asked not to be called again (its Retry-After).
	cooldown map[string]time.Time
}

// NewMulti returns a Multi over backends with opts (zero fields get defaults).
func NewMulti(backends []Backend, opts Options) *Multi {
	if opts.Timeout <= 0 {
		opts.Timeout = 20 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	return &Multi{backends: append([]Backend(nil), backends...), opts: opts, cooldown: map[string]time.Time{}}
}

// Active returns the names of the backends, in order.
func (m *Multi) Active() []string {
	names := make([]string, len(m.backends))
	for i, b := range m.backends {
		names[i] = b.Name()
	}
	return names
}

// Kinds returns the kinds its backends serve, each once, in backend order.
func (m *Multi) Kinds() []Kind {
	var out []Kind
	for _, b := range m.backends {
		for _, k := range b.Kinds() {
			if !hasKind(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// route returns the backends serving k; when none does, the web backends, so
// that a query is never silently sent nowhere.
func (m *Multi) route(k Kind) []Backend {
	var out []Backend
	for _, b := range m.backends {
		if hasKind(b.Kinds(), k) {
			out = append(out, b)
		}
	}
	if len(out) == 0 && k != KindWeb {
		return m.route(KindWeb)
	}
	return out
}

// Search sends q to every backend serving q.Kind (empty Kind means web), all
// at once (or Options.Concurrency at a time), each bounded by Options.Timeout, and
// returns their results merged (interleaved by rank, so each backend's best
// come first), filtered by q.Since and deduplicated by normalised URL, DOI,
// arXiv id and near-identical title+snippet; metadata of duplicates is merged
// into the kept result. Limit applies per backend. Failing backends are
// reported in Outcome.Errors in backend order; Search never fails as a whole
// and returns empty results when every backend fails. An empty q.Text asks
// no backend and returns an empty Outcome.
func (m *Multi) Search(ctx context.Context, q Query) Outcome {
	return m.search(ctx, q, nil)
}

// search is Search, taking the backend calls it makes from reserved where
// it holds some (nil: none).
func (m *Multi) search(ctx context.Context, q Query, reserved *Reservation) Outcome {
	if strings.TrimSpace(q.Text) == "" {
		return Outcome{}
	}
	q.Kind = q.kind()
	q.Limit = q.limit()
	backends := m.route(q.Kind)

	type answer struct {
		results []Result
		err     *BackendError
	}
	answers := make([]answer, len(backends))
	at := len(backends)
	if c := m.opts.Concurrency; c > 0 && c < at {
		at = c
	}
	sem := make(chan struct{}, max(at, 1))
	var wg sync.WaitGroup
	for i, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				answers[i].err = &BackendError{Backend: b.Name(), Err: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			res, err := m.searchOne(ctx, b, q, reserved)
			answers[i] = answer{results: res, err: err}
		}()
	}
	wg.Wait()

	var out Outcome
	lists := make([][]Result, 0, len(answers))
	for i, a := range answers {
		if a.err != nil {
			out.Errors = append(out.Errors, *a.err)
			continue
		}
		for j := range a.results {
			r := &a.results[j]
			r.Backend = backends[i].Name()
			r.Kind = cmp.Or(r.Kind, q.Kind)
		}
		lists = append(lists, a.results)
	}
	out.Results = merge(lists, q.Since)
	return out
}

// searchOne queries one backend under the limiter, the cooldown and the
// timeout; a call reserved for the backend (reserved.take) stands for the
// limiter's answer.
func (m *Multi) searchOne(ctx context.Context, b Backend, q Query, reserved *Reservation) (res []Result, berr *BackendError) {
	name := b.Name()
	defer func() {
		if p := recover(); p != nil {
			res, berr = nil, &BackendError{Backend: name, Err: fmt.Errorf("backend panicked: %v", p)}
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, m.opts.Timeout)
	defer cancel()

	if until, ok := m.coolingDown(name); ok {
		return nil, &BackendError{Backend: name, Err: errors.New("service asked to wait"), RateLimited: true, RetryAfter: until}
	}
	if m.opts.Limiter != nil && !reserved.take(name) {
		if err := m.waitLimiter(ctx, name); err != nil {
			return nil, err
		}
	}
	res, err := b.Search(ctx, q)
	if err == nil {
		return res, nil
	}
	be := &BackendError{Backend: name, Err: err}
	var inner *BackendError
	if errors.As(err, &inner) {
		be.Err, be.RateLimited, be.RetryAfter = inner.Err, inner.RateLimited, inner.RetryAfter
	}
	if !be.RateLimited && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		be.Err = fmt.Errorf("no answer within %s: %w", m.opts.Timeout, context.DeadlineExceeded)
	}
	if be.RateLimited && be.RetryAfter > 0 {
		m.mu.Lock()
		m.cooldown[name] = m.opts.Clock.Now().Add(be.RetryAfter)
		m.mu.Unlock()
	}
	return nil, be
}

// coolingDown reports whether the service asked not to be called before some
// time that has not come yet, and how long remains.
func (m *Multi) coolingDown(name string) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	until, ok := m.cooldown[name]
	if !ok {
		return 0, false
	}
	left := until.Sub(m.opts.Clock.Now())
	if left <= 0 {
		delete(m.cooldown, name)
		return 0, false
	}
	return left, true
}

// waitLimiter asks the limiter, waiting up to MaxWait for a slot.
func (m *Multi) waitLimiter(ctx context.Context, name string) *BackendError {
	deadline := m.opts.Clock.Now().Add(m.opts.MaxWait)
	for {
		wait, err := m.opts.Limiter.Allow(ctx, name)
		if err != nil {
			return &BackendError{Backend: name, Err: fmt.Errorf("%w: %w", ErrLimiterFailed, err)}
		}
		if wait <= 0 {
			return nil
		}
		if m.opts.Clock.Now().Add(wait).After(deadline) {
			return &BackendError{Backend: name, Err: fmt.Errorf("%w within %s", ErrBudgetSpent, m.opts.MaxWait), RateLimited: true, RetryAfter: wait}
		}
		t := m.opts.Clock.NewTimer(wait, "search", "limiter")
		select {
		case <-ctx.Done():
			t.Stop()
			return &BackendError{Backend: name, Err: fmt.Errorf("waiting for rate limit: %w", ctx.Err()), RateLimited: true, RetryAfter: wait}
		case <-t.C:
		}
	}
}

// merge interleaves the lists by rank, drops results older than since's day
// and results without URL, and folds duplicates into the first occurrence.
func merge(lists [][]Result, since time.Time) []Result {
	var ordered []Result
	for rank := 0; ; rank++ {
		found := false
		for _, l := range lists {
			if rank < len(l) {
				ordered = append(ordered, l[rank])
				found = true
			}
		}
		if !found {
			break
		}
	}
	sinceDay := time.Time{}
	if !since.IsZero() {
		sinceDay = since.UTC().Truncate(24 * time.Hour)
	}

	var (
		out    []Result
		byURL  = map[string]int{}
		byDOI  = map[string]int{}
		byArx  = map[string]int{}
		hashes []uint64 // parallel to out; 0 when the text is too short to compare
	)
	for _, r := range ordered {
		if r.URL == "" {
			continue
		}
		if !sinceDay.IsZero() && !r.Published.IsZero() && r.Published.Before(sinceDay) {
			continue
		}
		fillIdentifiers(&r)
		key, err := dedup.NormalizeURL(r.URL)
		if err != nil {
			if !isItemURL(r.URL) {
				continue // not an http(s) URL: nothing the fetcher could read
			}
			key = r.URL
		}
		h := contentHash(r)
		idx := -1
		if i, ok := byURL[key]; ok {
			idx = i
		} else if i, ok := byDOI[r.DOI]; ok && r.DOI != "" {
			idx = i
		} else if i, ok := byArx[r.ArxivID]; ok && r.ArxivID != "" {
			idx = i
		} else if h != 0 {
			for i, o := range hashes {
				if o != 0 && dedup.NearDuplicate(h, o) {
					idx = i
					break
				}
			}
		}
		if idx < 0 {
			idx = len(out)
			out = append(out, r)
			hashes = append(hashes, h)
		} else {
			mergeInto(&out[idx], r)
		}
		byURL[key] = idx
		if d := out[idx].DOI; d != "" {
			byDOI[d] = idx
		}
		if a := out[idx].ArxivID; a != "" {
			byArx[a] = idx
		}
		if r.DOI != "" {
			byDOI[r.DOI] = idx
		}
		if r.ArxivID != "" {
			byArx[r.ArxivID] = idx
		}
	}
	return out
}

// minHashWords is the fewest words of title+snippet worth fingerprinting;
// shorter texts (a bare title) would match unrelated results too easily.
const minHashWords = 12

func contentHash(r Result) uint64 {
	text := r.Title + " " + r.Snippet
	n := 0
	inWord := false
	for _, c := range text {
		if c == ' ' || c == '\n' || c == '\t' {
			inWord = false
		} else if !inWord {
			inWord = true
			n++
		}
	}
	if n < minHashWords {
		return 0
	}
	return dedup.Simhash(text)
}

// fillIdentifiers canonicalises DOI and ArxivID and fills them from the URL.
func fillIdentifiers(r *Result) {
	doi, arx := dedup.Identifiers(r.URL)
	r.DOI = dedup.NormalizeDOI(r.DOI)
	r.ArxivID = dedup.NormalizeArxivID(r.ArxivID)
	r.DOI = cmp.Or(r.DOI, doi)
	r.ArxivID = cmp.Or(r.ArxivID, arx)
	if r.ArxivID == "" && r.DOI != "" {
		_, r.ArxivID = dedup.Identifiers("https://doi.org/" + r.DOI)
	}
}

// mergeInto fills what kept lacks from dup.
func mergeInto(kept *Result, dup Result) {
	kept.Title = cmp.Or(kept.Title, dup.Title)
	if len(dup.Snippet) > len(kept.Snippet) && kept.Snippet == "" {
		kept.Snippet = dup.Snippet
	}
	if kept.Published.IsZero() {
		kept.Published = dup.Published
	}
	if len(kept.Authors) == 0 {
		kept.Authors = dup.Authors
	}
	kept.Citations = max(kept.Citations, dup.Citations)
	kept.DOI = cmp.Or(kept.DOI, dup.DOI)
	kept.ArxivID = cmp.Or(kept.ArxivID, dup.ArxivID)
}
