package fetch

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
)

// The PDFs are package extract's test files: three pages, the second
// blank; "open" is encrypted without a user password (readable by anyone),
// "password" needs one.
func readPDF(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../extract/testdata/encrypted-" + name + ".pdf")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFetchPDF(t *testing.T) {
	open, locked := readPDF(t, "open"), readPDF(t, "password")
	mux := http.NewServeMux()
	serve := func(path, ct string, body []byte) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.Write(body)
		})
	}
	serve("/paper", "application/pdf", open)
	serve("/download", "application/octet-stream", open) // known by sniffing
	serve("/mislabelled", "text/html", open)             // known by sniffing
	serve("/unlabelled", "", open)
	serve("/locked", "application/pdf", locked)
	serve("/fake", "application/pdf", []byte("<html><body>not a PDF</body></html>"))
	serve("/blob", "application/octet-stream", []byte("\x00\x01binary"))
	serve("/page.pdf", "text/html", []byte(simplePage("A web page named like a PDF")))
	srv := startServer(t, mux)
	f := newTestFetcher(t, Config{}, nil)
	ctx := context.Background()

	for _, path := range []string{"/paper", "/download", "/mislabelled", "/unlabelled"} {
		p, err := f.Fetch(ctx, srv.URL+path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if p.Kind != "pdf" || p.ContentType != "application/pdf" || p.Title != "Three pages" || p.PageCount != 3 || len(p.PageStarts) != 3 {
			t.Errorf("%s: %+v", path, p)
		}
		third := p.Text[p.PageStarts[2]:]
		if !strings.HasPrefix(third, "The third page speaks of mountains") {
			t.Errorf("%s: page 3 = %q", path, third)
		}
	}

	_, err := f.Fetch(ctx, srv.URL+"/locked")
	e := wantReason(t, err, ReasonUnreadable)
	if !strings.HasPrefix(e.Detail, "encrypted PDF") {
		t.Errorf("Detail = %q", e.Detail)
	}
	for _, path := range []string{"/fake", "/blob"} {
		_, err = f.Fetch(ctx, srv.URL+path)
		wantReason(t, err, ReasonContentType)
	}
	// A ".pdf" suffix says nothing: the body decides.
	p, err := f.Fetch(ctx, srv.URL+"/page.pdf")
	if err != nil || p.Kind != "" || p.Title != "A web page named like a PDF" {
		t.Errorf("/page.pdf: %+v, %v", p, err)
	}
}

func TestFetchPDFPageBound(t *testing.T) {
	srv := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(readPDF(t, "open"))
	}))
	f := newTestFetcher(t, Config{MaxPDFPages: 2}, nil)
	p, err := f.Fetch(context.Background(), srv.URL+"/paper")
	if err != nil {
		t.Fatal(err)
	}
	if p.PageCount != 3 || len(p.PageStarts) != 2 || p.Note != "more than 2 pages: read the first 2" || strings.Contains(p.Text, "mountains") {
		t.Errorf("%+v", p)
	}
}
