package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// DefaultTavilyURL is the Tavily API base.
const DefaultTavilyURL = "https://api.tavily.com"

// Tavily queries the Tavily search API (POST /search), authenticated with a
// bearer key.
type Tavily struct {
	base, key string
	hs        HTTPSettings
}

// NewTavily returns a Tavily backend; an empty baseURL means DefaultTavilyURL.
func NewTavily(baseURL, apiKey string, hs HTTPSettings) *Tavily {
	baseURL = cmp.Or(baseURL, DefaultTavilyURL)
	return &Tavily{base: baseURL, key: apiKey, hs: hs.withDefaults()}
}

// Name implements Backend.
func (t *Tavily) Name() string { return "tavily" }

// Kinds implements Backend.
func (t *Tavily) Kinds() []Kind { return []Kind{KindWeb, KindNews} }

type tavilyRequest struct {
	Query         string `json:"query"`
	Topic         string `json:"topic"`
	SearchDepth   string `json:"search_depth"`
	MaxResults    int    `json:"max_results"`
	StartDate     string `json:"start_date,omitempty"`
	IncludeAnswer bool   `json:"include_answer"`
}

type tavilyAnswer struct {
	Results []struct {
		Title         string  `json:"title"`
		URL           string  `json:"url"`
		Content       string  `json:"content"`
		Score         float64 `json:"score"`
		PublishedDate string  `json:"published_date"`
	} `json:"results"`
}

// Search implements Backend. Since becomes start_date (YYYY-MM-DD, UTC).
func (t *Tavily) Search(ctx context.Context, q Query) ([]Result, error) {
	if t.key == "" {
		return nil, errors.New("no API key configured")
	}
	tr := tavilyRequest{Query: q.Text, Topic: "general", SearchDepth: "basic", MaxResults: min(q.limit(), 20)}
	if q.kind() == KindNews {
		tr.Topic = "news"
	}
	if !q.Since.IsZero() {
		tr.StartDate = q.Since.UTC().Format("2006-01-02")
	}
	payload, err := json.Marshal(tr)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, endpoint(t.base, "/search"), bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	body, err := t.hs.do(ctx, t.Name(), req, "application/json", tavilyError)
	if err != nil {
		return nil, err
	}
	var a tavilyAnswer
	if err := decodeJSON(body, &a); err != nil {
		return nil, err
	}
	var out []Result
	for _, r := range a.Results {
		if r.URL == "" {
			continue
		}
		out = append(out, Result{
			URL: r.URL, Title: cleanText(r.Title), Snippet: cleanText(r.Content),
			Published: parseTime([]string{time.RFC1123, time.RFC1123Z, time.RFC3339, "2006-01-02"}, r.PublishedDate),
		})
		if len(out) == q.limit() {
			break
		}
	}
	return out, nil
}

// tavilyError reads {"detail":{"error":"…"}}.
func tavilyError(body []byte) string {
	var e struct {
		Detail struct {
			Error string `json:"error"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Detail.Error
}
