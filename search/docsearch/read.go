package docsearch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/researchbot/researchbot/extract"
)

// Document is a document's stored text as a run reads it.
type Document struct {
	// Title is its citation: the path within its folder, and the page the
	// address named ("policies/leave.pdf, p. 3").
	Title string
	Kind  string
	// Text starts at the page the address named when the whole text is
	// longer than ReadRunes; PageStarts are the byte offsets of the pages
	// in Text, those of the pages left out before it being 0, so page n
	// is still PageStarts[n-1].
	Text       string
	PageStarts []int
	PageCount  int
	Truncated  bool
	// Note says what was left out.
	Note string
}

// ErrNotFound is a document the index does not (or no longer) hold.
var ErrNotFound = errors.New("no such document in the collection")

// Read returns the stored text of the document at the docs:// address u,
// from the page it names. The file itself is not read: what a run sees is
// what was indexed.
func (c *Collection) Read(ctx context.Context, u string) (Document, error) {
	root, rel, page, ok := ParseURL(u)
	if !ok {
		return Document{}, fmt.Errorf("not a document address: %q", u)
	}
	key := root + "/" + rel
	e := c.manifest().Files[key]
	if e == nil || e.Skipped != "" {
		return Document{}, fmt.Errorf("%s: %w", Cite(rel, 0), ErrNotFound)
	}
	if e.Pages == 0 {
		page = 0
	} else if page < 1 || page > e.Parts {
		page = 1
	}
	d := Document{Title: Cite(rel, page), Kind: e.Kind, PageCount: e.Pages, Truncated: e.Truncated, Note: e.Note}
	ids := e.partIDs(key)
	if e.Pages > 0 {
		ids = ids[page-1:]
	}
	texts, err := c.storedTexts(ctx, ids)
	if err != nil {
		return Document{}, err
	}
	var b strings.Builder
	for n := 1; n < page; n++ {
		d.PageStarts = append(d.PageStarts, 0)
	}
	for i, id := range ids {
		if e.Pages > 0 {
			d.PageStarts = append(d.PageStarts, b.Len())
		}
		b.WriteString(texts[id])
		if e.Pages > 0 && i+1 < len(ids) {
			b.WriteString("\n\n")
		}
		if b.Len() > ReadRunes*4 {
			break // enough to cut below
		}
	}
	text, cut := extract.TruncateRunes(b.String(), ReadRunes)
	d.Text = text
	for len(d.PageStarts) > 0 && d.PageStarts[len(d.PageStarts)-1] > len(text) {
		d.PageStarts = d.PageStarts[:len(d.PageStarts)-1]
	}
	if cut || page > 1 {
		d.Truncated = true
		d.Note = readNote(page, e.Pages, cut)
	}
	return d, nil
}

func readNote(page, pages int, cut bool) string {
	switch {
	case page > 1 && cut:
		return fmt.Sprintf("read from page %d (the best match) for %d characters, of %d pages", page, ReadRunes, pages)
	case page > 1:
		return fmt.Sprintf("read from page %d (the best match) to the end, of %d pages", page, pages)
	}
	return fmt.Sprintf("read the first %d characters", ReadRunes)
}

// storedTexts are the stored texts of the index documents ids, by id (an
// empty page has none).
func (c *Collection) storedTexts(ctx context.Context, ids []string) (map[string]string, error) {
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
	req.Fields = []string{fieldText}
	res, err := c.index.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("document index: %w", err)
	}
	out := make(map[string]string, len(res.Hits))
	for _, h := range res.Hits {
		out[h.ID], _ = h.Fields[fieldText].(string)
	}
	return out, nil
}
