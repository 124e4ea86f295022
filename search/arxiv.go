package search

import (
	"cmp"
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/researchbot/researchbot/dedup"
)

// DefaultArxivURL is the arXiv API endpoint.
const DefaultArxivURL = "https://export.arxiv.org/api/query"

// Arxiv queries the arXiv API, which answers in Atom. arXiv asks clients to
// make no more than one request every three seconds; configure the shared
// limiter accordingly (e.g. 20 per minute).
type Arxiv struct {
	base string
	hs   HTTPSettings
}

// NewArxiv returns an arXiv backend; an empty baseURL means DefaultArxivURL.
// baseURL is the full query endpoint (…/api/query).
func NewArxiv(baseURL string, hs HTTPSettings) *Arxiv {
	baseURL = cmp.Or(baseURL, DefaultArxivURL)
	return &Arxiv{base: baseURL, hs: hs.withDefaults()}
}

// Name implements Backend.
func (a *Arxiv) Name() string { return "arxiv" }

// Kinds implements Backend.
func (a *Arxiv) Kinds() []Kind { return []Kind{KindAcademic} }

type arxivFeed struct {
	XMLName xml.Name     `xml:"http://www.w3.org/2005/Atom feed"`
	Entries []arxivEntry `xml:"entry"`
}

type arxivEntry struct {
	ID        string `xml:"id"`
	Title     string `xml:"title"`
	Summary   string `xml:"summary"`
	Published string `xml:"published"`
	Authors   []struct {
		Name string `xml:"name"`
	} `xml:"author"`
	Links []struct {
		Href string `xml:"href,attr"`
		Rel  string `xml:"rel,attr"`
		Type string `xml:"type,attr"`
	} `xml:"link"`
	DOI string `xml:"http://arxiv.org/schemas/atom doi"`
}

// Search implements Backend. The text becomes an AND of all: terms; Since
// becomes a submittedDate:[YYYYMMDDHHMM TO YYYYMMDDHHMM] clause (UTC), and
// results are then sorted by submission date, newest first.
func (a *Arxiv) Search(ctx context.Context, q Query) ([]Result, error) {
	var terms []string
	for _, w := range strings.FieldsFunc(q.Text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '.'
	}) {
		w = strings.Trim(w, "-.")
		if w == "" || strings.EqualFold(w, "AND") || strings.EqualFold(w, "OR") || strings.EqualFold(w, "ANDNOT") {
			continue
		}
		terms = append(terms, "all:"+w)
	}
	if len(terms) == 0 {
		return nil, nil
	}
	sq := strings.Join(terms, " AND ")
	sortBy := "relevance"
	if !q.Since.IsZero() {
		to := a.hs.Clock.Now().UTC().Add(24 * time.Hour)
		sq = fmt.Sprintf("(%s) AND submittedDate:[%s TO %s]", sq, q.Since.UTC().Format("200601021504"), to.Format("200601021504"))
		sortBy = "submittedDate"
	}
	v := url.Values{}
	v.Set("search_query", sq)
	v.Set("start", "0")
	v.Set("max_results", strconv.Itoa(q.limit()))
	v.Set("sortBy", sortBy)
	v.Set("sortOrder", "descending")
	req, err := http.NewRequest(http.MethodGet, a.base+"?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	body, err := a.hs.do(ctx, a.Name(), req, "application/atom+xml", arxivError)
	if err != nil {
		return nil, err
	}
	var feed arxivFeed
	if err := xml.Unmarshal(body, &feed); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	// arXiv reports bad queries as a feed holding one "Error" entry.
	if len(feed.Entries) == 1 && strings.Contains(feed.Entries[0].ID, "/api/errors") {
		return nil, &StatusError{StatusCode: http.StatusBadRequest, Message: shorten(feed.Entries[0].Summary, 200)}
	}
	var out []Result
	for _, e := range feed.Entries {
		link := e.ID
		for _, l := range e.Links {
			if l.Rel == "alternate" && l.Href != "" {
				link = l.Href
			}
		}
		if link == "" {
			continue
		}
		r := Result{
			URL: link, Title: cleanText(e.Title), Snippet: shorten(cleanText(e.Summary), 1000),
			Published: parseTime([]string{time.RFC3339}, e.Published),
			DOI:       dedup.NormalizeDOI(e.DOI),
		}
		_, r.ArxivID = dedup.Identifiers(e.ID)
		for _, au := range e.Authors {
			if n := strings.TrimSpace(au.Name); n != "" {
				r.Authors = append(r.Authors, n)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// arxivError reads the summary of the error entry in an Atom error feed.
func arxivError(body []byte) string {
	var feed arxivFeed
	if xml.Unmarshal(body, &feed) != nil || len(feed.Entries) == 0 {
		return shorten(string(body), 120)
	}
	return feed.Entries[0].Summary
}
