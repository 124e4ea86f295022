// Package search finds candidate sources for a research question across
// several search services at once.
//
// A Backend wraps one service (SearXNG, Brave, Tavily, arXiv, Wikipedia,
// OpenAlex, Crossref; an MCP server through package mcpsearch). Multi fans a
// Query out to the backends that serve its Kind, in parallel with bounded concurrency, a per-backend timeout and a
// per-backend rate limit (shared across replicas with NewSharedLimiter over
// a shared budget such as redisstore.RateLimiter), then merges and deduplicates the results (package dedup).
// Queries searched together (a search step's) can take their calls from
// each backend's budget in one ask first (Multi.Reserve).
// A backend that fails, is slow or is rate-limited never stops a search: its
// error is returned in Outcome.Errors next to the other backends' results.
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is the sort of material a query asks for; it decides which backends
// are asked.
type Kind string

// Query kinds.
const (
	// KindWeb is general web search.
	KindWeb Kind = "web"
	// KindAcademic is scholarly literature: papers, preprints, their metadata.
	KindAcademic Kind = "academic"
	// KindNews is recent news articles.
	KindNews Kind = "news"
)

// DefaultLimit is the number of results asked of each backend when
// Query.Limit is 0.
const DefaultLimit = 10

// Query is one search.
type Query struct {
	// Text is the query as a person would type it.
	Text string
	// Kind routes the query; empty means KindWeb.
	Kind Kind
	// Since, when not zero, asks only for items published (or, for Wikipedia,
	// edited) on or after this time. Each backend encodes it in its request as
	// precisely as its API allows; Multi then drops results whose known
	// publication day is before Since's day.
	Since time.Time
	// Limit is the number of results asked of each backend; 0 means DefaultLimit.
	Limit int
}

func (q Query) limit() int {
	if q.Limit <= 0 {
		return DefaultLimit
	}
	return q.Limit
}

func (q Query) kind() Kind {
	if q.Kind == "" {
		return KindWeb
	}
	return q.Kind
}

// ItemScheme is the URL scheme of results that are not web pages but items
// their backend reads itself (an MCP server's, mcp://<server>/<id>, see
// package mcpsearch): they are kept and deduplicated as spelt.
const ItemScheme = "mcp"

// DocumentScheme is the URL scheme of results from the document collection
// (docs://<folder>/<path>, see package docsearch), which the run reads from
// the collection's index: they too are kept and deduplicated as spelt.
const DocumentScheme = "docs"

// isItemURL reports an address of ItemScheme or DocumentScheme.
func isItemURL(u string) bool {
	return strings.HasPrefix(u, ItemScheme+"://") || strings.HasPrefix(u, DocumentScheme+"://")
}

// Result is one search hit. Text fields are untrusted data from the web.
type Result struct {
	URL, Title, Snippet string
	// Backend is the Name of the backend that found it.
	Backend string
	// Kind is the kind of the query that found it.
	Kind Kind
	// Published is the publication time when known (for Wikipedia the last
	// edit), zero otherwise.
	Published time.Time
	Authors   []string
	// Citations is the citation count reported by scholarly indexes.
	Citations int
	// DOI and ArxivID are canonical identifiers (see dedup.NormalizeDOI and
	// dedup.NormalizeArxivID), empty when unknown.
	DOI, ArxivID string
}

// Backend is one search service.
type Backend interface {
	// Name is a short stable name ("arxiv", "searxng"), used in logs, errors
	// and rate-limit keys.
	Name() string
	// Kinds lists the query kinds the backend serves.
	Kinds() []Kind
	// Search runs q. It must return promptly when ctx is done. A rate-limit
	// answer is returned as a *BackendError with RateLimited set.
	Search(ctx context.Context, q Query) ([]Result, error)
}

// ErrRateLimited matches (with errors.Is) a BackendError whose backend or the
// shared limiter refused the request for now.
var ErrRateLimited = errors.New("search: rate limited")

// BackendError is the failure of one backend during one search.
type BackendError struct {
	// Backend is the backend's Name.
	Backend string
	// Err is the cause; a timeout wraps context.DeadlineExceeded and an HTTP
	// failure is a *StatusError.
	Err error
	// RateLimited is set when the service answered 429 (or its equivalent) or
	// the shared limiter refused the call.
	RateLimited bool
	// RetryAfter is how long to wait before asking again, when known.
	RetryAfter time.Duration
}

// Error implements error.
func (e *BackendError) Error() string {
	msg := fmt.Sprintf("search backend %s: %v", e.Backend, e.Err)
	if e.RateLimited && e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter.Round(time.Second))
	}
	return msg
}

// ErrLimiterFailed is the cause (errors.Is) of a BackendError whose backend
// was never called because the shared rate limiter itself failed, e.g. it
// could not reach its store: a failure of our own infrastructure, not of
// the backend.
var ErrLimiterFailed = errors.New("the shared rate limiter failed")

// ErrBudgetSpent is the cause (errors.Is) of a BackendError whose backend
// was never called because the shared rate budget for it (RATE_LIMIT_*,
// shared by every replica) had no room within Options.MaxWait: our own
// pacing, not the backend's failure.
var ErrBudgetSpent = errors.New("the shared rate limit had no room")

// Unwrap returns the cause.
func (e *BackendError) Unwrap() error { return e.Err }

// Is reports whether target is ErrRateLimited and e is a rate-limit error.
func (e *BackendError) Is(target error) bool {
	return target == ErrRateLimited && e.RateLimited
}

// StatusError is an unexpected HTTP answer from a search service.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the service's own explanation when it gave one, shortened.
	Message string
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.StatusCode)
	}
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, e.Message)
}

// Outcome is what a Multi search found: merged, deduplicated results and the
// errors of the backends that failed.
type Outcome struct {
	Results []Result
	Errors  []BackendError
}

// HeuristicScore is a cheap relevance prior for ranking before any model
// reads the result, adapted from the seed design's _compute_relevance:
//
//   - a substantial snippet (more than 100 characters): +0.3
//   - full content: +0.2 in the seed; search results carry no content, so 0 here
//   - citations: +min(0.3, citations/100*0.1)
//   - recent: +0.2 when published within 3 years before now (the seed's fixed
//     "year >= 2023" rule, made relative to the clock); unknown dates get nothing
//
// The sum is capped at 1.0 (so in practice it is at most 0.8 here).
func HeuristicScore(r Result, now time.Time) float64 {
	score := 0.0
	if len([]rune(r.Snippet)) > 100 {
		score += 0.3
	}
	if r.Citations > 0 {
		score += min(0.3, float64(r.Citations)/100*0.1)
	}
	if !r.Published.IsZero() && !r.Published.Before(now.AddDate(-3, 0, 0)) && !r.Published.After(now.Add(24*time.Hour)) {
		score += 0.2
	}
	return min(1.0, score)
}
