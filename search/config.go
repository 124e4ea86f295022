package search

import (
	"cmp"
	"net/http"
	"strings"

	"github.com/coder/quartz"
)

// Config selects and configures backends. Every base URL is configurable so
// that tests, proxies and mirrors can stand in for the public services.
type Config struct {
	// SearXNGURL turns on SearXNG (SEARXNG_URL).
	SearXNGURL string
	// BraveAPIKey turns on Brave; BraveURL overrides DefaultBraveURL.
	BraveAPIKey, BraveURL string
	// TavilyAPIKey turns on Tavily; TavilyURL overrides DefaultTavilyURL.
	TavilyAPIKey, TavilyURL string
	// ArxivURL, WikipediaURL, OpenAlexURL and CrossrefURL turn on those
	// keyless services at the given address.
	ArxivURL, WikipediaURL, OpenAlexURL, CrossrefURL string
	// Contact is an e-mail address for the services' polite pools (OpenAlex,
	// Crossref mailto) and the User-Agent.
	Contact string
	// HTTPClient sends requests; nil means a client with a 30 s timeout.
	HTTPClient *http.Client
	// UserAgent overrides DefaultUserAgent (a "mailto:" with Contact is added).
	UserAgent string
	// Clock is the backends' clock (HTTPSettings.Clock); nil means the real
	// clock.
	Clock quartz.Clock
}

// BackendsFromConfig returns the configured backends, in the order SearXNG,
// Brave, Tavily, arXiv, Wikipedia, OpenAlex, Crossref. When none is
// configured it returns the keyless public ones, arXiv, Wikipedia and
// OpenAlex, at their default addresses. Callers log the names (Multi.Active).
func BackendsFromConfig(cfg Config) []Backend {
	ua := cfg.UserAgent
	ua = cmp.Or(ua, DefaultUserAgent)
	if c := strings.TrimSpace(cfg.Contact); c != "" && !strings.Contains(ua, c) {
		if strings.HasSuffix(ua, ")") {
			ua = strings.TrimSuffix(ua, ")") + "; mailto:" + c + ")"
		} else {
			ua += " (mailto:" + c + ")"
		}
	}
	hs := HTTPSettings{Client: cfg.HTTPClient, UserAgent: ua, Clock: cfg.Clock}
	var out []Backend
	if cfg.SearXNGURL != "" {
		out = append(out, NewSearXNG(cfg.SearXNGURL, hs))
	}
	if cfg.BraveAPIKey != "" {
		out = append(out, NewBrave(cfg.BraveURL, cfg.BraveAPIKey, hs))
	}
	if cfg.TavilyAPIKey != "" {
		out = append(out, NewTavily(cfg.TavilyURL, cfg.TavilyAPIKey, hs))
	}
	if cfg.ArxivURL != "" {
		out = append(out, NewArxiv(cfg.ArxivURL, hs))
	}
	if cfg.WikipediaURL != "" {
		out = append(out, NewWikipedia(cfg.WikipediaURL, hs))
	}
	if cfg.OpenAlexURL != "" {
		out = append(out, NewOpenAlex(cfg.OpenAlexURL, cfg.Contact, hs))
	}
	if cfg.CrossrefURL != "" {
		out = append(out, NewCrossref(cfg.CrossrefURL, cfg.Contact, hs))
	}
	if len(out) == 0 {
		out = []Backend{
			NewArxiv(DefaultArxivURL, hs),
			NewWikipedia(DefaultWikipediaURL, hs),
			NewOpenAlex(DefaultOpenAlexURL, cfg.Contact, hs),
		}
	}
	return out
}
