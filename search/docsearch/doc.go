// Package docsearch makes a folder of documents (DOCS_DIR) a search backend:
// a Collection keeps a full-text index of the folders' files (bleve, BM25
// scoring) that Update brings up to date incrementally, Backend searches it
// beside the web backends, and Collection.Read serves a hit's stored text to
// a run, so a document is never fetched over the network.
//
// A document is addressed docs://<root>/<path within root>[#page=N]: the
// root is the name of one of the collection's folders (its base name), the
// path is relative to it, so no absolute local path reaches a report. A PDF
// is indexed page by page, and a hit names the page that matched best.
//
// Files are read with package extract and its bounds; a file it cannot read
// is kept in the index's manifest with the reason, shown by Status, and
// not read again until it changes (its size or modification time).
package docsearch
