package search

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SearXNG queries a (self-hosted) SearXNG instance through its JSON API,
// GET /search?q=…&format=json. The instance must have "json" among
// search.formats in its settings.yml, otherwise it answers 403.
type SearXNG struct {
	base string
	hs   HTTPSettings
}

// NewSearXNG returns a backend for the instance at baseURL (e.g.
// "http://searxng:8080").
func NewSearXNG(baseURL string, hs HTTPSettings) *SearXNG {
	return &SearXNG{base: baseURL, hs: hs.withDefaults()}
}

// Name implements Backend.
func (s *SearXNG) Name() string { return "searxng" }

// Kinds implements Backend: web (category general), news (category news) and
// academic (category science, which holds arXiv, PubMed, Google Scholar, …).
func (s *SearXNG) Kinds() []Kind { return []Kind{KindWeb, KindNews, KindAcademic} }

type searxngAnswer struct {
	Query   string `json:"query"`
	Results []struct {
		URL           string   `json:"url"`
		Title         string   `json:"title"`
		Content       string   `json:"content"`
		Engine        string   `json:"engine"`
		PublishedDate *string  `json:"publishedDate"`
		Authors       []string `json:"authors"`
		DOI           string   `json:"doi"`
	} `json:"results"`
	UnresponsiveEngines [][]string `json:"unresponsive_engines"`
}

// Search implements Backend. Since becomes time_range, the smallest of day,
// month or year that covers it (SearXNG has no absolute dates; Multi filters
// the rest); a Since more than a year back sends no range.
func (s *SearXNG) Search(ctx context.Context, q Query) ([]Result, error) {
	v := url.Values{}
	v.Set("q", q.Text)
	v.Set("format", "json")
	v.Set("pageno", "1")
	switch q.kind() {
	case KindNews:
		v.Set("categories", "news")
	case KindAcademic:
		v.Set("categories", "science")
	default:
		v.Set("categories", "general")
	}
	if tr := searxngTimeRange(q.Since, s.hs.Clock.Now()); tr != "" {
		v.Set("time_range", tr)
	}
	req, err := http.NewRequest(http.MethodGet, endpoint(s.base, "/search")+"?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	body, err := s.hs.do(ctx, s.Name(), req, "application/json", func(b []byte) string {
		return strings.TrimSpace(cleanText(string(b)))
	})
	if err != nil {
		return nil, err
	}
	var a searxngAnswer
	if err := decodeJSON(body, &a); err != nil {
		return nil, err
	}
	var out []Result
	for _, r := range a.Results {
		if r.URL == "" {
			continue
		}
		res := Result{URL: r.URL, Title: cleanText(r.Title), Snippet: cleanText(r.Content), Authors: r.Authors, DOI: r.DOI}
		if r.PublishedDate != nil {
			res.Published = parseTime([]string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"}, *r.PublishedDate)
		}
		out = append(out, res)
		if len(out) == q.limit() {
			break
		}
	}
	return out, nil
}

func searxngTimeRange(since, now time.Time) string {
	if since.IsZero() {
		return ""
	}
	age := now.Sub(since)
	switch {
	case age <= 24*time.Hour:
		return "day"
	case age <= 31*24*time.Hour:
		return "month"
	case age <= 365*24*time.Hour:
		return "year"
	}
	return ""
}
