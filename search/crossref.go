package search

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/researchbot/researchbot/dedup"
)

// DefaultCrossrefURL is the Crossref REST API base.
const DefaultCrossrefURL = "https://api.crossref.org"

// Crossref queries the Crossref REST API (GET /works?query=…). It needs no
// key; a mailto parameter puts requests in Crossref's "polite" pool.
type Crossref struct {
	base, mailto string
	hs           HTTPSettings
}

// NewCrossref returns a Crossref backend; an empty baseURL means
// DefaultCrossrefURL.
func NewCrossref(baseURL, mailto string, hs HTTPSettings) *Crossref {
	baseURL = cmp.Or(baseURL, DefaultCrossrefURL)
	return &Crossref{base: baseURL, mailto: mailto, hs: hs.withDefaults()}
}

// Name implements Backend.
func (c *Crossref) Name() string { return "crossref" }

// Kinds implements Backend.
func (c *Crossref) Kinds() []Kind { return []Kind{KindAcademic} }

type crossrefDate struct {
	DateParts [][]int `json:"date-parts"`
}

type crossrefAnswer struct {
	Status  string `json:"status"`
	Message struct {
		Items []struct {
			DOI      string   `json:"DOI"`
			URL      string   `json:"URL"`
			Title    []string `json:"title"`
			Abstract string   `json:"abstract"`
			Author   []struct {
				Given  string `json:"given"`
				Family string `json:"family"`
				Name   string `json:"name"`
			} `json:"author"`
			Published      *crossrefDate `json:"published"`
			Issued         *crossrefDate `json:"issued"`
			ReferencedBy   int           `json:"is-referenced-by-count"`
			ContainerTitle []string      `json:"container-title"`
		} `json:"items"`
	} `json:"message"`
}

// Search implements Backend. Since becomes filter=from-pub-date:YYYY-MM-DD.
func (c *Crossref) Search(ctx context.Context, q Query) ([]Result, error) {
	v := url.Values{}
	v.Set("query", q.Text)
	v.Set("rows", strconv.Itoa(min(q.limit(), 1000)))
	v.Set("select", "DOI,URL,title,abstract,author,published,issued,is-referenced-by-count,container-title")
	if !q.Since.IsZero() {
		v.Set("filter", "from-pub-date:"+q.Since.UTC().Format("2006-01-02"))
	}
	if c.mailto != "" {
		v.Set("mailto", c.mailto)
	}
	req, err := http.NewRequest(http.MethodGet, endpoint(c.base, "/works")+"?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	body, err := c.hs.do(ctx, c.Name(), req, "application/json", crossrefError)
	if err != nil {
		return nil, err
	}
	var a crossrefAnswer
	if err := decodeJSON(body, &a); err != nil {
		return nil, err
	}
	var out []Result
	for _, it := range a.Message.Items {
		doi := dedup.NormalizeDOI(it.DOI)
		if doi == "" {
			continue
		}
		r := Result{URL: "https://doi.org/" + doi, DOI: doi, Snippet: shorten(cleanText(it.Abstract), 1000), Citations: it.ReferencedBy}
		if len(it.Title) > 0 {
			r.Title = cleanText(it.Title[0])
		}
		if it.Published != nil {
			r.Published = parseDateParts(it.Published.DateParts)
		} else if it.Issued != nil {
			r.Published = parseDateParts(it.Issued.DateParts)
		}
		for _, au := range it.Author {
			n := strings.TrimSpace(au.Given + " " + au.Family)
			if n == "" {
				n = strings.TrimSpace(au.Name)
			}
			if n != "" {
				r.Authors = append(r.Authors, n)
			}
		}
		_, r.ArxivID = dedup.Identifiers("https://doi.org/" + doi)
		out = append(out, r)
	}
	return out, nil
}

// crossrefError reads {"status":"failed","message":[{"message":"…"}]} or a
// plain-text body.
func crossrefError(body []byte) string {
	var e struct {
		Message []struct {
			Message string `json:"message"`
		} `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Message) > 0 {
		return e.Message[0].Message
	}
	return shorten(string(body), 120)
}
