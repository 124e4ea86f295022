package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/search"
	"github.com/researchbot/researchbot/search/docsearch"
)

// tocPDF is TCPDF's sixteen-page table-of-contents sample, shipped in a PDF
// library's module: a real PDF no one here wrote.
const tocPDF = "github.com/dslipak/pdf@v0.0.2/testdata/tableOfContentWithHeader_tcpdf-org__pdf17_trailer.pdf"

// docsFolder is a collection folder "manuals" holding the TCPDF sample at
// guides/toc.pdf and a Markdown note, indexed into indexDir before the app
// starts (so the run's first search sees it).
func docsFolder(t *testing.T) (dir, indexDir string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no module cache: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), tocPDF)
	body, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("%s not in the module cache (go mod download fetches it): %v", tocPDF, err)
	}
	dir = filepath.Join(t.TempDir(), "manuals")
	indexDir = filepath.Join(t.TempDir(), "index")
	for name, text := range map[string]string{
		"guides/toc.pdf": string(body),
		"notes/tcpdf.md": "# TCPDF notes\n\nTCPDF writes the table of contents after the chapters and moves it to the front.\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := docsearch.Open(docsearch.Config{Dirs: []string{dir}, IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, indexDir
}

// A run searches the document collection beside the web, reads a PDF hit
// from the index's stored text (from its best-matching page) and cites it
// by its path in the folder and that page, marked as internal documents;
// no local path reaches the report.
func TestDocumentCollectionIsSearchedReadAndCitedWithPathAndPage(t *testing.T) {
	dir, indexDir := docsFolder(t)
	res := &researchtest.Researcher{Queries: []pipeline.PlannedQuery{
		{Text: "Powered by TCPDF", Kind: "web", SubQuestion: 1},
		{Text: "TCPDF table of contents chapters", Kind: "academic", SubQuestion: 2},
	}}
	h := newHarness(t, res, map[string]string{"DOCS_DIR": dir, "DOCS_INDEX_DIR": indexDir})
	h.web.SetPages([]researchtest.Page{}) // the web finds nothing: the report rests on the documents
	if !strings.Contains(strings.Join(h.app.Backends, ","), "documents") {
		t.Fatalf("backends %v lack the collection", h.app.Backends)
	}
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s %s)", r.Status, r.FallbackReason, r.Failure)
	}
	assertCitationsFetched(t, r)
	var pdf *pipeline.Reference
	for i, ref := range r.Report.References {
		if ref.Domain != "internal documents (manuals)" || !strings.HasPrefix(ref.URL, "docs://manuals/") {
			t.Errorf("reference %+v is not an internal document", ref)
		}
		if strings.HasPrefix(ref.URL, "docs://manuals/guides/toc.pdf") {
			pdf = &r.Report.References[i]
		}
	}
	if pdf == nil {
		t.Fatalf("the PDF is not cited: %+v", r.Report.References)
	}
	if pdf.Title != "guides/toc.pdf, p. 16" || pdf.URL != "docs://manuals/guides/toc.pdf#page=16" || pdf.Pages != 16 {
		t.Errorf("PDF reference %+v: want its path and best page", pdf)
	}
	md := r.Report.Markdown
	if want := "[" + strconv.Itoa(pdf.N) + "] guides/toc.pdf, p. 16 — internal documents (manuals), PDF, 16 pages"; !strings.Contains(md, want) {
		t.Errorf("report lacks %q:\n%s", want, md)
	}
	if want := "[" + strconv.Itoa(pdf.N) + ", p. 16]"; !strings.Contains(md, want) {
		t.Errorf("the quote from page 16 is not cited %q:\n%s", want, md)
	}
	if strings.Contains(md, dir) || strings.Contains(md, indexDir) {
		t.Errorf("a local path reached the report:\n%s", md)
	}
}

// Only a process that runs research holds the index: an App that only
// reads the store (runs, status, checkpoints) leaves it to serve or
// worker, and its collection answers searches with a stated error.
func TestOnlyWorkersOpenTheDocumentIndex(t *testing.T) {
	dir, indexDir := docsFolder(t)
	srv, _ := redistest.Start(t)
	cfg := testConfig(t, srv.URL, "http://127.0.0.1:1", "http://127.0.0.1:1", map[string]string{"DOCS_DIR": dir, "DOCS_INDEX_DIR": indexDir})
	a, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	other, err := docsearch.Open(docsearch.Config{Dirs: []string{dir}, IndexDir: indexDir})
	if err != nil {
		t.Fatalf("an App without workers holds the index: %v", err)
	}
	_, err = docsBackend{a.docs}.Search(context.Background(), search.Query{Text: "TCPDF"})
	if err == nil || !strings.Contains(err.Error(), "not open in this process") {
		t.Errorf("search without the index: %v", err)
	}
	// A worker started while another process holds the index runs without it.
	stop, err := a.StartWorker([]string{"test"})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if a.docs.c.Load() != nil {
		t.Error("the App opened an index another process holds")
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
}
