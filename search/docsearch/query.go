package docsearch

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Hit is one document found: the file and its best-matching page.
type Hit struct {
	// Root is the name of the file's folder, Rel its path within it.
	Root, Rel string
	// Page is the page that matched best (from 1), 0 for a document
	// without pages; Pages is how many it has.
	Page, Pages int
	// Kind is the extracted document's kind ("pdf", "markdown", …).
	Kind  string
	Title string
	// Score is the BM25 score of the best page.
	Score float64
	// Snippet is text around the first query word on that page.
	Snippet string
}

// URL is the hit's address (naming its page).
func (h Hit) URL() string { return URL(h.Root, h.Rel, h.Page) }

// pagesPerFile is how many index documents a search asks for per file it
// returns: a file's pages compete with each other.
const pagesPerFile = 4

// Search returns up to limit files matching text, best first, each with
// its best page.
func (c *Collection) Search(ctx context.Context, text string, limit int) ([]Hit, error) {
	text = strings.TrimSpace(text)
	if text == "" || limit <= 0 {
		return nil, nil
	}
	body := bleve.NewMatchQuery(text)
	body.SetField(fieldText)
	title := bleve.NewMatchQuery(text)
	title.SetField(fieldTitle)
	title.SetBoost(0.5)
	req := bleve.NewSearchRequestOptions(query.NewDisjunctionQuery([]query.Query{body, title}), limit*pagesPerFile, 0, false)
	req.Fields = []string{fieldText}
	res, err := c.index.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("document search: %w", err)
	}
	m := c.manifest()
	var hits []Hit
	seen := map[string]bool{}
	for _, d := range res.Hits {
		i := strings.LastIndexByte(d.ID, '#')
		if i < 0 {
			continue
		}
		key := d.ID[:i]
		e := m.Files[key]
		if e == nil || seen[key] {
			continue // gone since, or a worse page of a file already listed
		}
		seen[key] = true
		page := 0
		if e.Pages > 0 {
			_, _ = fmt.Sscan(d.ID[i+1:], &page)
		}
		pageText, _ := d.Fields[fieldText].(string)
		hits = append(hits, Hit{
			Root: e.Root, Rel: e.Rel, Page: page, Pages: e.Pages, Kind: e.Kind, Title: e.Title,
			Score: d.Score, Snippet: snippet(pageText, text),
		})
		if len(hits) == limit {
			break
		}
	}
	return hits, nil
}

// Bounds of a snippet, in bytes around the first query word found.
const (
	snippetBefore = 120
	snippetAfter  = 280
)

// snippet is the text around the first occurrence of a word of q (of three
// letters or more) in text, on one line; the start of text when none is found.
func snippet(text, q string) string {
	lower := strings.ToLower(text)
	at := -1
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if utf8.RuneCountInString(w) < 3 {
			continue
		}
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if len(lower) != len(text) { // lower-casing changed byte offsets
		at = -1
	}
	from, to := 0, min(len(text), snippetBefore+snippetAfter)
	if at >= 0 {
		from, to = max(0, at-snippetBefore), min(len(text), at+snippetAfter)
	}
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	s := strings.Join(strings.Fields(text[from:to]), " ")
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}
