package docsearch

import (
	"context"

	"github.com/researchbot/researchbot/search"
)

// BackendName is the name of the collection's search backend: results
// found in it are internal documents, not web pages.
const BackendName = "documents"

// Backend is the collection as a search.Backend. Its results' URLs are
// docs:// addresses that Collection.Read serves; their titles are their
// citations ("policies/leave.pdf, p. 3").
type Backend struct{ c *Collection }

// NewBackend returns c as a search backend.
func NewBackend(c *Collection) *Backend { return &Backend{c: c} }

// Name implements search.Backend.
func (b *Backend) Name() string { return BackendName }

// Kinds implements search.Backend: a collection answers web and academic
// queries (not news).
func (b *Backend) Kinds() []search.Kind { return []search.Kind{search.KindWeb, search.KindAcademic} }

// Search implements search.Backend. Since is not applied: a document's
// date is not known.
func (b *Backend) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	hits, err := b.c.Search(ctx, q.Text, limit)
	if err != nil {
		return nil, &search.BackendError{Backend: BackendName, Err: err}
	}
	out := make([]search.Result, len(hits))
	for i, h := range hits {
		out[i] = search.Result{
			URL: h.URL(), Title: Cite(h.Rel, h.Page), Snippet: h.Snippet, Backend: BackendName, Kind: q.Kind,
		}
	}
	return out, nil
}
