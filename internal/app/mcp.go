package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/dedup"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/search"
	"github.com/researchbot/researchbot/search/docsearch"
	"github.com/researchbot/researchbot/search/mcpsearch"
)

// searchBackends returns the configured web backends and a backend per
// configured MCP server (which the caller must Close); the web backends
// read the time on clock.
func searchBackends(cfg config.Config, httpClient *http.Client, clock quartz.Clock) (web []search.Backend, mcp []*mcpsearch.Backend) {
	web = search.BackendsFromConfig(search.Config{
		SearXNGURL: cfg.SearXNGURL, BraveAPIKey: cfg.BraveAPIKey, BraveURL: cfg.BraveURL,
		TavilyAPIKey: cfg.TavilyAPIKey, TavilyURL: cfg.TavilyURL, ArxivURL: cfg.ArxivURL,
		WikipediaURL: cfg.WikipediaURL, OpenAlexURL: cfg.OpenAlexURL, CrossrefURL: cfg.CrossrefURL, Contact: cfg.Contact,
		HTTPClient: httpClient, Clock: clock,
	})
	for _, s := range cfg.MCPServers {
		kinds := make([]search.Kind, len(s.Kinds))
		for i, k := range s.Kinds {
			kinds[i] = search.Kind(k)
		}
		mcp = append(mcp, mcpsearch.New(mcpsearch.Server{
			Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers,
			SearchTool: s.SearchTool, QueryArg: s.QueryArg, ReadTool: s.ReadTool, ReadArg: s.ReadArg,
			ReadResource: s.ReadResource, Kinds: kinds, Timeout: s.Timeout, MaxConcurrency: s.MaxConcurrency,
			// An MCP server's text is bounded like a web page's.
			MaxBytes: int(cfg.FetchMaxBytes),
		}, httpClient))
	}
	return web, mcp
}

// sourceFetcher reads a source: an MCP server's result from that server
// (with its configured read tool or resource), a document of the
// collection from its index (see readDocument), anything else from the web.
type sourceFetcher struct {
	web   pipeline.Fetcher
	mcp   map[string]*mcpsearch.Backend
	docs  *docsSlot // nil without DOCS_DIR
	clock quartz.Clock
	calls CallObserver
}

func newSourceFetcher(web pipeline.Fetcher, mcp []*mcpsearch.Backend, docs *docsSlot, clock quartz.Clock, calls CallObserver) pipeline.Fetcher {
	f := &sourceFetcher{web: web, mcp: map[string]*mcpsearch.Backend{}, docs: docs, clock: clock, calls: calls}
	for _, b := range mcp {
		f.mcp[b.Server().Name] = b
	}
	return f
}

func (f *sourceFetcher) Fetch(ctx context.Context, u string) (pipeline.Document, error) {
	if _, _, _, ok := docsearch.ParseURL(u); ok {
		return f.readDocument(ctx, u)
	}
	name, id, ok := mcpsearch.ParseURL(u)
	if !ok {
		return f.web.Fetch(ctx, u)
	}
	b := f.mcp[name]
	if b == nil {
		return pipeline.Document{}, fmt.Errorf("MCP server %s is no longer configured", name)
	}
	start := f.clock.Now()
	d, err := b.Read(ctx, id)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	f.calls.Fetch(outcome, len(d.Text), f.clock.Now().Sub(start))
	if err != nil {
		return pipeline.Document{}, err
	}
	return pipeline.Document{
		URL: u, FinalURL: u, Title: d.Title, Text: d.Text, Truncated: d.Truncated, Simhash: dedup.Simhash(d.Text),
	}, nil
}
