package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/fetch"
	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/search"
)

// CallObserver is told about every call to the model, the search backends
// and the web, for metrics (Options.Calls).
type CallObserver interface {
	// LLMCall: the role, how the call ended (ok, error, unusable,
	// context_length, cancelled) and how long it took, retries included.
	LLMCall(role, outcome string, d time.Duration)
	// Search: per active backend, how it ended (results, empty, error,
	// rate_limited), and how long the search took.
	Search(outcomes map[string]string, d time.Duration)
	// Fetch: how it ended (2xx, or the fetcher's reason), the bytes of text
	// it gave and how long it took.
	Fetch(outcome string, textBytes int, d time.Duration)
}

// callObserver is Options.Calls, or one that ignores calls.
func (a *App) callObserver() CallObserver {
	if a.opts.Calls != nil {
		return a.opts.Calls
	}
	return ignoreCalls{}
}

type ignoreCalls struct{}

func (ignoreCalls) LLMCall(string, string, time.Duration)   {}
func (ignoreCalls) Search(map[string]string, time.Duration) {}
func (ignoreCalls) Fetch(string, int, time.Duration)        {}

// llmOutcome classifies how a model call ended.
func llmOutcome(ctx context.Context, err error) string {
	var refusal *llm.RefusalError
	var api *llm.APIError
	switch {
	case err == nil:
		return "ok"
	case ctx.Err() != nil:
		return "cancelled"
	case errors.Is(err, llm.ErrContextLength):
		return "context_length"
	case errors.As(err, &refusal), errors.Is(err, llm.ErrQuota),
		errors.As(err, &api) && (api.StatusCode == 401 || api.StatusCode == 403 || api.StatusCode == 404):
		return "unusable"
	}
	return "error"
}

// searchOutcomes says how each active backend did in one search.
func searchOutcomes(backends []string, out search.Outcome) map[string]string {
	res := make(map[string]string, len(backends))
	for _, b := range backends {
		res[b] = "empty"
	}
	for _, r := range out.Results {
		res[r.Backend] = "results"
	}
	for _, e := range out.Errors {
		res[e.Backend] = "error"
		if e.RateLimited {
			res[e.Backend] = "rate_limited"
		}
	}
	return res
}

// fetchOutcome is the status class of a fetched page, or why it failed.
func fetchOutcome(p fetch.Page, err error) string {
	var fe *fetch.Error
	switch {
	case err == nil && p.StatusCode == 0:
		return "ok"
	case err == nil:
		return fmt.Sprintf("%dxx", p.StatusCode/100)
	case errors.As(err, &fe):
		return string(fe.Reason)
	}
	return "error"
}
