// Package distiller stands in for github.com/markusmobius/go-domdistiller
// in researchbot's build (a replace directive in the main go.mod).
//
// go-trafilatura extracts the pages' main text. When its own extraction
// finds too little, it tries two fallbacks in turn: go-readability, then
// DOM Distiller, and stops at the first that finds enough. On the 983
// pages of go-trafilatura's comparison corpus (BenchmarkExtractionQuality
// in package fetch), DOM Distiller was reached on 19 and changed the
// extracted text, title or date of none: with this stand-in every page
// extracts to the same bytes. Yet its package initialisation builds
// Unicode range tables rune by rune, which every researchbot process paid
// at start, `researchbot --help` included: 10–12 ms and 1.9 MB of heap, a
// fifth of all package initialisation (docs/performance.md, Start-up).
//
// This stand-in declares what go-trafilatura compiles against, and Apply
// finds nothing, so the fallback goes on with the candidates it has.
package distiller

import (
	"errors"
	"net/url"

	"golang.org/x/net/html"
)

// ErrNotLinked is what Apply returns.
var ErrNotLinked = errors.New("go-domdistiller is not linked into this program (go-trafilatura's fallback uses go-readability alone)")

// PaginationAlgo, as in go-domdistiller.
type PaginationAlgo uint

// The pagination algorithms.
const (
	PrevNext PaginationAlgo = iota
	PageNumber
)

// Options holds the settings go-trafilatura passes; they are ignored.
type Options struct {
	OriginalURL    *url.URL
	SkipPagination bool
	PaginationAlgo PaginationAlgo
}

// Result is a distilled page; Apply never returns one.
type Result struct {
	Node *html.Node
}

// Apply finds no content: it returns ErrNotLinked.
func Apply(*html.Node, *Options) (*Result, error) { return nil, ErrNotLinked }
