package search

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultWikipediaURL is the English Wikipedia site.
const DefaultWikipediaURL = "https://en.wikipedia.org"

// Wikipedia queries a MediaWiki site's action API (list=search). Wikimedia
// asks for a User-Agent with contact details (see Config.Contact).
type Wikipedia struct {
	api, articles string
	hs            HTTPSettings
}

// NewWikipedia returns a backend for the MediaWiki site at baseURL, either the
// site root ("https://en.wikipedia.org", API at /w/api.php, articles at
// /wiki/) or the API endpoint itself (…/w/api.php). Empty means
// DefaultWikipediaURL.
func NewWikipedia(baseURL string, hs HTTPSettings) *Wikipedia {
	baseURL = cmp.Or(baseURL, DefaultWikipediaURL)
	root := strings.TrimRight(baseURL, "/")
	api := root + "/w/api.php"
	if strings.HasSuffix(root, "/api.php") {
		api = root
		root = strings.TrimSuffix(strings.TrimSuffix(root, "/api.php"), "/w")
	}
	return &Wikipedia{api: api, articles: root + "/wiki/", hs: hs.withDefaults()}
}

// Name implements Backend.
func (w *Wikipedia) Name() string { return "wikipedia" }

// Kinds implements Backend.
func (w *Wikipedia) Kinds() []Kind { return []Kind{KindWeb} }

type wikiAnswer struct {
	Error *struct {
		Code string `json:"code"`
		Info string `json:"info"`
	} `json:"error"`
	Query struct {
		Search []struct {
			Title     string `json:"title"`
			PageID    int    `json:"pageid"`
			Snippet   string `json:"snippet"`
			Timestamp string `json:"timestamp"`
		} `json:"search"`
	} `json:"query"`
}

// Search implements Backend. MediaWiki search cannot filter by date, so with
// Since the request asks for srsort=last_edit_desc and pages last edited
// before Since are dropped (Result.Published is the last edit).
func (w *Wikipedia) Search(ctx context.Context, q Query) ([]Result, error) {
	v := url.Values{}
	v.Set("action", "query")
	v.Set("list", "search")
	v.Set("srsearch", q.Text)
	v.Set("srlimit", strconv.Itoa(min(q.limit(), 500)))
	v.Set("srprop", "snippet|timestamp")
	v.Set("format", "json")
	v.Set("formatversion", "2")
	v.Set("maxlag", "5")
	if !q.Since.IsZero() {
		v.Set("srsort", "last_edit_desc")
	}
	req, err := http.NewRequest(http.MethodGet, w.api+"?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	body, err := w.hs.do(ctx, w.Name(), req, "application/json", func(b []byte) string {
		var a wikiAnswer
		if json.Unmarshal(b, &a) == nil && a.Error != nil {
			return a.Error.Code + ": " + a.Error.Info
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	var a wikiAnswer
	if err := decodeJSON(body, &a); err != nil {
		return nil, err
	}
	// MediaWiki reports most errors with HTTP 200 and an "error" object.
	if a.Error != nil {
		se := &StatusError{StatusCode: http.StatusOK, Message: shorten(a.Error.Code+": "+a.Error.Info, 200)}
		if a.Error.Code == "ratelimited" || a.Error.Code == "maxlag" {
			return nil, &BackendError{Backend: w.Name(), Err: se, RateLimited: true, RetryAfter: 5 * time.Second}
		}
		return nil, se
	}
	var out []Result
	for _, s := range a.Query.Search {
		if s.Title == "" {
			continue
		}
		r := Result{
			URL:       w.articles + strings.ReplaceAll(url.PathEscape(strings.ReplaceAll(s.Title, " ", "_")), "%2F", "/"),
			Title:     s.Title,
			Snippet:   cleanText(s.Snippet),
			Published: parseTime([]string{time.RFC3339}, s.Timestamp),
		}
		if !q.Since.IsZero() && !r.Published.IsZero() && r.Published.Before(q.Since) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
