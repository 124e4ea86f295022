package search

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/researchbot/researchbot/dedup"
)

// DefaultOpenAlexURL is the OpenAlex API base.
const DefaultOpenAlexURL = "https://api.openalex.org"

// OpenAlex queries the OpenAlex works index (GET /works?search=…). It needs no
// key; a mailto parameter puts requests in OpenAlex's "polite pool".
type OpenAlex struct {
	base, mailto string
	hs           HTTPSettings
}

// NewOpenAlex returns an OpenAlex backend; an empty baseURL means
// DefaultOpenAlexURL. mailto, when set, is sent with every request.
func NewOpenAlex(baseURL, mailto string, hs HTTPSettings) *OpenAlex {
	baseURL = cmp.Or(baseURL, DefaultOpenAlexURL)
	return &OpenAlex{base: baseURL, mailto: mailto, hs: hs.withDefaults()}
}

// Name implements Backend.
func (o *OpenAlex) Name() string { return "openalex" }

// Kinds implements Backend.
func (o *OpenAlex) Kinds() []Kind { return []Kind{KindAcademic} }

type openAlexAnswer struct {
	Results []struct {
		ID              string `json:"id"`
		DOI             string `json:"doi"`
		Title           string `json:"title"`
		DisplayName     string `json:"display_name"`
		PublicationDate string `json:"publication_date"`
		CitedByCount    int    `json:"cited_by_count"`
		Authorships     []struct {
			Author struct {
				DisplayName string `json:"display_name"`
			} `json:"author"`
		} `json:"authorships"`
		PrimaryLocation *struct {
			LandingPageURL string `json:"landing_page_url"`
		} `json:"primary_location"`
		AbstractInvertedIndex map[string][]int `json:"abstract_inverted_index"`
		IDs                   map[string]any   `json:"ids"`
	} `json:"results"`
}

// Search implements Backend. Since becomes filter=from_publication_date:YYYY-MM-DD.
func (o *OpenAlex) Search(ctx context.Context, q Query) ([]Result, error) {
	v := url.Values{}
	v.Set("search", q.Text)
	v.Set("per_page", strconv.Itoa(min(q.limit(), 200)))
	v.Set("select", "id,doi,title,display_name,publication_date,cited_by_count,authorships,primary_location,abstract_inverted_index,ids")
	if !q.Since.IsZero() {
		v.Set("filter", "from_publication_date:"+q.Since.UTC().Format("2006-01-02"))
	}
	if o.mailto != "" {
		v.Set("mailto", o.mailto)
	}
	req, err := http.NewRequest(http.MethodGet, endpoint(o.base, "/works")+"?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	body, err := o.hs.do(ctx, o.Name(), req, "application/json", func(b []byte) string {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &e) != nil {
			return ""
		}
		return strings.TrimSpace(e.Error + " " + e.Message)
	})
	if err != nil {
		return nil, err
	}
	var a openAlexAnswer
	if err := decodeJSON(body, &a); err != nil {
		return nil, err
	}
	var out []Result
	for _, w := range a.Results {
		r := Result{
			Title:     cleanText(w.Title),
			Snippet:   shorten(abstractFromInvertedIndex(w.AbstractInvertedIndex), 1000),
			Published: parseTime([]string{"2006-01-02"}, w.PublicationDate),
			Citations: w.CitedByCount,
			DOI:       dedup.NormalizeDOI(w.DOI),
		}
		if r.Title == "" {
			r.Title = cleanText(w.DisplayName)
		}
		if s, ok := w.IDs["arxiv"].(string); ok {
			_, r.ArxivID = dedup.Identifiers(s)
		}
		switch {
		case w.DOI != "":
			r.URL = "https://doi.org/" + r.DOI
		case w.PrimaryLocation != nil && w.PrimaryLocation.LandingPageURL != "":
			r.URL = w.PrimaryLocation.LandingPageURL
		default:
			r.URL = w.ID
		}
		if r.DOI == "" && w.DOI != "" || r.URL == "" {
			continue
		}
		for _, au := range w.Authorships {
			if n := strings.TrimSpace(au.Author.DisplayName); n != "" {
				r.Authors = append(r.Authors, n)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// abstractFromInvertedIndex rebuilds the text OpenAlex ships as word →
// positions (it may not redistribute abstracts as plain text).
func abstractFromInvertedIndex(idx map[string][]int) string {
	if len(idx) == 0 {
		return ""
	}
	type wp struct {
		pos  int
		word string
	}
	var words []wp
	for w, ps := range idx {
		for _, p := range ps {
			words = append(words, wp{p, w})
		}
	}
	sort.Slice(words, func(i, j int) bool { return words[i].pos < words[j].pos })
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = w.word
	}
	return strings.Join(parts, " ")
}

// parseDateParts reads Crossref's {"date-parts": [[2021, 3, 4]]}.
func parseDateParts(parts [][]int) time.Time {
	if len(parts) == 0 || len(parts[0]) == 0 || parts[0][0] == 0 {
		return time.Time{}
	}
	p := parts[0]
	y, m, d := p[0], 1, 1
	if len(p) > 1 && p[1] >= 1 && p[1] <= 12 {
		m = p[1]
	}
	if len(p) > 2 && p[2] >= 1 && p[2] <= 31 {
		d = p[2]
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
}
