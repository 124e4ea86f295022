package search

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// DefaultBraveURL is the Brave Search API base.
const DefaultBraveURL = "https://api.search.brave.com/res/v1"

// Brave queries the Brave Search API (web and news endpoints), authenticated
// by the X-Subscription-Token header.
type Brave struct {
	base, key string
	hs        HTTPSettings
}

// NewBrave returns a Brave backend; an empty baseURL means DefaultBraveURL.
func NewBrave(baseURL, apiKey string, hs HTTPSettings) *Brave {
	baseURL = cmp.Or(baseURL, DefaultBraveURL)
	return &Brave{base: baseURL, key: apiKey, hs: hs.withDefaults()}
}

// Name implements Backend.
func (b *Brave) Name() string { return "brave" }

// Kinds implements Backend.
func (b *Brave) Kinds() []Kind { return []Kind{KindWeb, KindNews} }

type braveItem struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	PageAge     string `json:"page_age"`
}

type braveAnswer struct {
	Type string `json:"type"`
	Web  struct {
		Results []braveItem `json:"results"`
	} `json:"web"`
	// The news endpoint lists its results at the top level.
	Results []braveItem `json:"results"`
}

// Search implements Backend. Since becomes freshness=YYYY-MM-DDtoYYYY-MM-DD
// (from Since's day to tomorrow, UTC).
func (b *Brave) Search(ctx context.Context, q Query) ([]Result, error) {
	if b.key == "" {
		return nil, errors.New("no API key configured")
	}
	path, maxCount := "/web/search", 20
	if q.kind() == KindNews {
		path, maxCount = "/news/search", 50
	}
	v := url.Values{}
	v.Set("q", q.Text)
	v.Set("count", strconv.Itoa(min(q.limit(), maxCount)))
	if !q.Since.IsZero() {
		to := b.hs.Clock.Now().UTC().Add(24 * time.Hour)
		v.Set("freshness", q.Since.UTC().Format("2006-01-02")+"to"+to.Format("2006-01-02"))
	}
	req, err := http.NewRequest(http.MethodGet, endpoint(b.base, path)+"?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Subscription-Token", b.key)
	body, err := b.hs.do(ctx, b.Name(), req, "application/json", braveError)
	if err != nil {
		return nil, err
	}
	var a braveAnswer
	if err := decodeJSON(body, &a); err != nil {
		return nil, err
	}
	items := a.Web.Results
	if len(items) == 0 {
		items = a.Results
	}
	var out []Result
	for _, it := range items {
		if it.URL == "" {
			continue
		}
		out = append(out, Result{
			URL: it.URL, Title: cleanText(it.Title), Snippet: cleanText(it.Description),
			Published: parseTime([]string{time.RFC3339Nano, "2006-01-02T15:04:05"}, it.PageAge),
		})
		if len(out) == q.limit() {
			break
		}
	}
	return out, nil
}

// braveError reads {"type":"ErrorResponse","error":{"code":…,"detail":…}}.
func braveError(body []byte) string {
	var e struct {
		Error struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Code == "" && e.Error.Detail == "" {
		return ""
	}
	if e.Error.Detail == "" {
		return e.Error.Code
	}
	return e.Error.Code + ": " + e.Error.Detail
}
