package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/dedup"
	"github.com/researchbot/researchbot/fetch"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/search"
)

// model adapts the llm client to pipeline.Model, choosing a model per role.
type model struct {
	client  *llm.Client
	modelOf func(role string) string
	prices  map[string]llm.Price
	// endpoint names the model's endpoint in messages (no credentials).
	endpoint string
	calls    CallObserver
	spans    *tracing.Tracing // nil: none
	clock    quartz.Clock
}

func (m *model) Generate(ctx context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	req := llm.Request{
		Model:      m.modelOf(string(p.Role)),
		System:     p.System,
		User:       p.User,
		SchemaName: p.Name,
	}
	if p.OnRetry != nil {
		req.OnRetry = func(r llm.Retry) {
			p.OnRetry(pipeline.ModelRetry{Retry: r.N, Of: r.Max, Wait: r.Wait, Cause: r.Cause})
		}
	}
	start := m.clock.Now()
	spanCtx, endSpan := m.spans.ModelCall(ctx, p, req.Model)
	u, err := m.client.Generate(spanCtx, req, out)
	defer func() { m.calls.LLMCall(string(p.Role), llmOutcome(ctx, err), m.clock.Now().Sub(start)) }()
	pu := pipeline.Usage{Model: u.Model, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD, Calls: u.Calls, UnknownPrice: u.UnknownPrice}
	endSpan(pu, err)
	var refusal *llm.RefusalError
	var api *llm.APIError
	switch {
	case err == nil:
	case errors.Is(err, llm.ErrContextLength):
		err = fmt.Errorf("%w: %w", pipeline.ErrContextLength, err)
	case errors.As(err, &refusal), errors.Is(err, llm.ErrQuota):
		err = fmt.Errorf("%w: %w", pipeline.ErrModelUnusable, err)
	case errors.As(err, &api) && (api.StatusCode == 401 || api.StatusCode == 403 || api.StatusCode == 404):
		err = fmt.Errorf("%w: %w", pipeline.ErrModelUnusable, err)
	case ctx.Err() != nil:
	default:
		err = &modelError{endpoint: m.endpoint, err: err}
	}
	return pu, err
}

// modelError words a failed model call for people, naming the endpoint:
// "the model at http://127.0.0.1:9/v1 could not be reached (connection
// refused)". It is what a run that ends on it states as its cause.
type modelError struct {
	endpoint string
	err      error
}

func (e *modelError) Error() string { return e.Describe() + ": " + e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

// Describe implements the one-line description pipeline.Describe uses.
func (e *modelError) Describe() string {
	var api *llm.APIError
	var invalid *llm.InvalidOutputError
	switch {
	case errors.Is(e.err, llm.ErrUnreachable):
		return fmt.Sprintf("the model at %s could not be reached (%s)", e.endpoint, lastPart(e.err.Error()))
	case errors.Is(e.err, context.DeadlineExceeded):
		return fmt.Sprintf("the model at %s did not answer in time", e.endpoint)
	case errors.As(e.err, &api):
		return fmt.Sprintf("the model at %s answered HTTP %d %s", e.endpoint, api.StatusCode, http.StatusText(api.StatusCode))
	case errors.As(e.err, &invalid):
		if slices.ContainsFunc(invalid.Problems, func(p string) bool { return strings.Contains(p, "finish_reason=length") }) {
			return fmt.Sprintf("the model at %s did not return the structured answer asked for: its answer was cut off at the token limit", e.endpoint)
		}
		return fmt.Sprintf("the model at %s did not return the structured answer asked for", e.endpoint)
	}
	return fmt.Sprintf("the model at %s failed: %v", e.endpoint, e.err)
}

// lastPart is the innermost reason of a wrapped network error message
// ("dial tcp 127.0.0.1:9: connect: connection refused" → "connection refused").
func lastPart(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// endpointName is the base URL without credentials, for messages.
func endpointName(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return "the configured endpoint"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// Price implements pipeline.Pricer for estimates (pipeline.Config.Prices).
func (m *model) Price(role pipeline.Role) (float64, float64) {
	p := m.prices[m.modelOf(string(role))]
	return p.InputPerMTok, p.OutputPerMTok
}

// searcher adapts search.Multi to pipeline.Searcher, and to
// pipeline.SearchReserver: a search step's queries take their calls to
// each backend from its shared rate budget in one ask (search.Multi.Reserve).
type searcher struct {
	multi    *search.Multi
	reserved *search.Reservation // the calls a step reserved (Reserve); nil: none
	clock    quartz.Clock
	backends []string
	calls    CallObserver
	spans    *tracing.Tracing // nil: none
}

// Reserve implements pipeline.SearchReserver: the searcher it returns
// searches through the calls reserved for rs.
func (s *searcher) Reserve(ctx context.Context, rs []pipeline.SearchRequest) pipeline.Searcher {
	qs := make([]search.Query, len(rs))
	for i, r := range rs {
		qs[i] = searchQuery(r)
	}
	reserved := *s
	reserved.reserved = s.multi.Reserve(ctx, qs)
	return &reserved
}

// searchQuery is the search.Query of a pipeline's request.
func searchQuery(r pipeline.SearchRequest) search.Query {
	return search.Query{Text: r.Text, Kind: search.Kind(r.Kind), Since: r.Since, Limit: r.Limit}
}

// Kinds returns the query kinds the configured backends serve
// (pipeline.KindsServer).
func (s *searcher) Kinds() []string {
	var out []string
	for _, k := range s.multi.Kinds() {
		out = append(out, string(k))
	}
	return out
}

func (s *searcher) Search(ctx context.Context, r pipeline.SearchRequest) pipeline.SearchOutcome {
	start := s.clock.Now()
	spanCtx, endSpan := s.spans.Search(ctx, r)
	var out search.Outcome
	if s.reserved != nil {
		out = s.reserved.Search(spanCtx, searchQuery(r))
	} else {
		out = s.multi.Search(spanCtx, searchQuery(r))
	}
	outcomes := searchOutcomes(s.backends, out)
	endSpan(len(out.Results), outcomes)
	s.calls.Search(outcomes, s.clock.Now().Sub(start))
	res := pipeline.SearchOutcome{}
	now := s.clock.Now()
	for _, h := range out.Results {
		res.Hits = append(res.Hits, pipeline.Hit{
			Key: documentKey(h), URL: h.URL, Title: h.Title, Snippet: h.Snippet, Backend: h.Backend,
			Kind: string(h.Kind), Published: h.Published, Authors: h.Authors, Citations: h.Citations,
			Heuristic: search.HeuristicScore(h, now),
		})
	}
	for _, e := range out.Errors {
		res.Errors = append(res.Errors, e.Error())
	}
	res.Interrupted = interrupted(ctx, out.Errors)
	if res.Interrupted == nil && len(out.Results) == 0 {
		res.Paced = paced(out.Errors)
	}
	return res
}

// interrupted is the first of errs that is ours and not the backend's — the
// shared rate limiter failed (search.ErrLimiterFailed) — or, when ctx ended
// (the step was cancelled or lost its lease), its cause; nil when every
// error is the backends' own (pipeline.SearchOutcome.Interrupted).
func interrupted(ctx context.Context, errs []search.BackendError) error {
	if ctx.Err() != nil && len(errs) > 0 {
		return fmt.Errorf("the search was cancelled: %w", context.Cause(ctx))
	}
	for i := range errs {
		if errors.Is(&errs[i], search.ErrLimiterFailed) {
			return &errs[i]
		}
	}
	return nil
}

// paced is the first of errs when every one of them says our shared rate
// limit had no room for its backend (search.ErrBudgetSpent), nil otherwise
// (pipeline.SearchOutcome.Paced).
func paced(errs []search.BackendError) error {
	if len(errs) == 0 {
		return nil
	}
	for i := range errs {
		if !errors.Is(&errs[i], search.ErrBudgetSpent) {
			return nil
		}
	}
	return &errs[0]
}

// documentKey identifies a document across backends: DOI, arXiv id, or the
// normalised URL.
func documentKey(h search.Result) string {
	// The arXiv id first: one preprint may carry both an arXiv DOI and an id.
	switch {
	case h.ArxivID != "":
		return "arxiv:" + h.ArxivID
	case h.DOI != "":
		return "doi:" + h.DOI
	}
	if doi, arxiv := dedup.Identifiers(h.URL); arxiv != "" {
		return "arxiv:" + arxiv
	} else if doi != "" {
		return "doi:" + doi
	}
	if n, err := dedup.NormalizeURL(h.URL); err == nil {
		return n
	}
	return h.URL
}

// fetcher adapts fetch.Fetcher to pipeline.Fetcher.
type fetcher struct {
	f     *fetch.Fetcher
	clock quartz.Clock
	calls CallObserver
	spans *tracing.Tracing // nil: none
}

func (f *fetcher) Fetch(ctx context.Context, url string) (pipeline.Document, error) {
	start := f.clock.Now()
	if rules, ok := pipeline.DomainRulesFrom(ctx); ok {
		ctx = fetch.WithHostCheck(ctx, rules.Refusal)
	}
	spanCtx, endSpan := f.spans.Fetch(ctx, url)
	p, err := f.f.Fetch(spanCtx, url)
	outcome := fetchOutcome(p, err)
	endSpan(outcome, len(p.Text), err)
	f.calls.Fetch(outcome, len(p.Text), f.clock.Now().Sub(start))
	if err != nil {
		return pipeline.Document{}, err
	}
	return pipeline.Document{
		URL: p.URL, FinalURL: p.FinalURL, Title: p.Title, Author: p.Author, Published: p.Published,
		Text: p.Text, Truncated: p.Truncated, Simhash: dedup.Simhash(p.Text),
		Kind: p.Kind, PageCount: p.PageCount, PageStarts: p.PageStarts, Note: p.Note,
	}, nil
}
