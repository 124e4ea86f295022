package docsearch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/extract"
)

// bleveWorkers are the analysis goroutines bleve starts when the program
// starts (its package init), not ours.
var bleveWorkers = goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, bleveWorkers) }

// moduleFile is a file shipped in a module of the module cache (the PDF
// libraries' own test documents), skipping the test when it is absent.
func moduleFile(t testing.TB, pattern string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no module cache: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), pattern))
	if len(files) == 0 {
		t.Skipf("no %s in the module cache (go mod download fetches it)", pattern)
	}
	return files[0]
}

// Real documents no one here wrote: a five-page story saved as PDF by a
// converter and as Word, and TCPDF's sixteen-page table-of-contents sample.
const (
	storyPDF  = "github.com/dslipak/pdf@v0.0.2/testdata/story_freeconvert-com__pdf17_2trailer.pdf"
	storyDOCX = "github.com/dslipak/pdf@v0.0.2/testdata/story.docx"
	tocPDF    = "github.com/dslipak/pdf@v0.0.2/testdata/tableOfContentWithHeader_tcpdf-org__pdf17_trailer.pdf"
)

func copyFile(t testing.TB, src, dst string) {
	t.Helper()
	body, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(body))
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// folder makes a collection folder named "handbook" with real documents,
// a Markdown note, a CSV table and files that cannot be read.
func folder(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Handbook")
	copyFile(t, moduleFile(t, storyPDF), filepath.Join(dir, "reports", "story.pdf"))
	copyFile(t, moduleFile(t, tocPDF), filepath.Join(dir, "manual", "toc.pdf"))
	copyFile(t, moduleFile(t, storyDOCX), filepath.Join(dir, "story.docx"))
	writeFile(t, filepath.Join(dir, "notes", "monsoon.md"), "# Monsoon notes\n\nThe monsoon rainfall over the Western Ghats peaked in July, flooding the coastal plains.\n")
	writeFile(t, filepath.Join(dir, "data", "stations.csv"), "station,rainfall_mm\nMangalore,3900\nMumbai,2400\n")
	writeFile(t, filepath.Join(dir, "broken.pdf"), "%PDF-1.7\nthis is not a PDF body at all\n")
	writeFile(t, filepath.Join(dir, "photo.png"), "\x89PNG\r\n\x1a\n")
	writeFile(t, filepath.Join(dir, ".git", "config"), "[core]\n")
	return dir
}

func open(t testing.TB, dirs ...string) *Collection {
	t.Helper()
	c, err := Open(Config{Dirs: dirs, IndexDir: filepath.Join(t.TempDir(), "index")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func update(t testing.TB, c *Collection) Report {
	t.Helper()
	rep, err := c.Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestIndexRealFilesAndSkipUnreadableOnesWithTheirReason(t *testing.T) {
	c := open(t, folder(t))
	rep := update(t, c)
	if rep.Added != 7 || rep.Skipped != 2 || rep.Changed+rep.Removed+rep.Unchanged != 0 {
		t.Errorf("report = %+v", rep)
	}
	st, err := ReadStatus(c.Status().IndexDir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Documents != 5 || st.Pages != 5+16+3 || st.Checked.IsZero() || st.IndexBytes == 0 {
		t.Errorf("status = %+v", st)
	}
	if len(st.Roots) != 1 || st.Roots[0].Name != "handbook" || st.Roots[0].Documents != 5 {
		t.Errorf("roots = %+v", st.Roots)
	}
	reasons := map[string]string{}
	for _, s := range st.Skipped {
		reasons[s.Path] = s.Reason
	}
	if r := reasons["handbook/broken.pdf"]; !strings.HasPrefix(r, "damaged PDF") {
		t.Errorf("broken.pdf skipped for %q", r)
	}
	if r := reasons["handbook/photo.png"]; !strings.Contains(r, "not a kind of document read (.png); accepted: PDF") {
		t.Errorf("photo.png skipped for %q", r)
	}
	if _, ok := reasons["handbook/.git/config"]; ok || len(reasons) != 2 {
		t.Errorf("skipped = %v (hidden folders are not read)", reasons)
	}
}

func TestSearchRanksTheRightFileFirstWithItsBestPage(t *testing.T) {
	c := open(t, folder(t))
	update(t, c)
	for _, tc := range []struct {
		q, rel string
		page   int
	}{
		{"monsoon rainfall Western Ghats", "notes/monsoon.md", 0},
		{"Powered by TCPDF", "manual/toc.pdf", 16},
		{"Sub-Paragraph 1.2.1", "manual/toc.pdf", 5},
		{"TEST FILE", "reports/story.pdf", 1},
		{"Mangalore station", "data/stations.csv", 0},
	} {
		hits, err := c.Search(context.Background(), tc.q, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Rel != tc.rel || hits[0].Page != tc.page {
			t.Errorf("%q: hits = %+v, want %s p. %d first", tc.q, hits, tc.rel, tc.page)
			continue
		}
		if hits[0].Root != "handbook" || hits[0].Snippet == "" {
			t.Errorf("%q: first hit %+v", tc.q, hits[0])
		}
	}
	if hits, _ := c.Search(context.Background(), "Dadda Edda Fadda", 10); len(hits) != 2 || hits[1].Rel != "story.docx" {
		t.Errorf("a file is listed once, with its best page: %+v", hits)
	}
	if hits, _ := c.Search(context.Background(), "zeppelin", 10); len(hits) != 0 {
		t.Errorf("no match: %+v", hits)
	}
}

func TestUpdateReadsOnlyWhatChangedAndDropsWhatWasRemoved(t *testing.T) {
	dir := folder(t)
	c := open(t, dir)
	update(t, c)
	if rep := update(t, c); rep.Unchanged != 7 || len(rep.Read) != 0 {
		t.Fatalf("nothing changed, yet: %+v", rep)
	}
	note := filepath.Join(dir, "notes", "monsoon.md")
	writeFile(t, note, "# Monsoon notes\n\nThe retreating monsoon brought cyclones to the Bay of Bengal in October.\n")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(note, later, later); err != nil {
		t.Fatal(err)
	}
	rep := update(t, c)
	if !slices.Equal(rep.Read, []string{"handbook/notes/monsoon.md"}) || rep.Changed != 1 || rep.Unchanged != 6 {
		t.Fatalf("one file changed: %+v", rep)
	}
	if hits, _ := c.Search(context.Background(), "cyclones Bay of Bengal", 3); len(hits) == 0 || hits[0].Rel != "notes/monsoon.md" {
		t.Errorf("new text not found: %+v", hits)
	}
	if hits, _ := c.Search(context.Background(), "Western Ghats", 3); len(hits) != 0 {
		t.Errorf("old text still found: %+v", hits)
	}

	if err := os.Remove(filepath.Join(dir, "manual", "toc.pdf")); err != nil {
		t.Fatal(err)
	}
	rep = update(t, c)
	if rep.Removed != 1 || len(rep.Read) != 0 {
		t.Fatalf("one file removed: %+v", rep)
	}
	if hits, _ := c.Search(context.Background(), "Powered by TCPDF", 3); len(hits) != 0 {
		t.Errorf("removed file still found: %+v", hits)
	}
	if _, err := c.Read(context.Background(), URL("handbook", "manual/toc.pdf", 16)); !errors.Is(err, ErrNotFound) {
		t.Errorf("reading a removed file: %v", err)
	}
	if st := c.Status(); st.Documents != 4 || st.Pages != 5+1+1+1 {
		t.Errorf("status after removal: %+v", st)
	}
}

func TestTheIndexOutlivesTheProcess(t *testing.T) {
	dir := folder(t)
	index := filepath.Join(t.TempDir(), "index")
	if _, err := ReadStatus(index); !errors.Is(err, ErrNeverIndexed) {
		t.Errorf("status before any update: %v", err)
	}
	c, err := Open(Config{Dirs: []string{dir}, IndexDir: index})
	if err != nil {
		t.Fatal(err)
	}
	update(t, c)
	if _, err := Open(Config{Dirs: []string{dir}, IndexDir: index}); !errors.Is(err, ErrInUse) {
		t.Errorf("a second opener: %v, want ErrInUse", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c2, err := Open(Config{Dirs: []string{dir}, IndexDir: index})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if rep := update(t, c2); rep.Unchanged != 7 || len(rep.Read) != 0 {
		t.Errorf("reopened index read files again: %+v", rep)
	}
	if hits, _ := c2.Search(context.Background(), "Powered by TCPDF", 1); len(hits) != 1 {
		t.Errorf("reopened index: %+v", hits)
	}
}

func TestReadServesTheStoredTextFromTheBestPage(t *testing.T) {
	c := open(t, folder(t))
	update(t, c)
	d, err := c.Read(context.Background(), URL("handbook", "manual/toc.pdf", 5))
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "manual/toc.pdf, p. 5" || d.Kind != string(extract.KindPDF) || d.PageCount != 16 || len(d.PageStarts) != 16 {
		t.Fatalf("doc = %+v", d)
	}
	if !strings.HasPrefix(d.Text, "Sub-Paragraph 1.2.1") || !d.Truncated || !strings.Contains(d.Note, "from page 5") {
		t.Errorf("text %q…, truncated %v, note %q", d.Text[:40], d.Truncated, d.Note)
	}
	if p := pageAt(d.PageStarts, strings.Index(d.Text, "Powered by TCPDF")); p != 16 {
		t.Errorf("page of the last page's text = %d, want 16", p)
	}
	if p := pageAt(d.PageStarts, 0); p != 5 {
		t.Errorf("page of the first text = %d, want 5", p)
	}
	md, err := c.Read(context.Background(), URL("handbook", "notes/monsoon.md", 0))
	if err != nil || md.Title != "notes/monsoon.md" || !strings.Contains(md.Text, "Western Ghats") || md.PageStarts != nil {
		t.Errorf("markdown: %+v, %v", md, err)
	}
	if _, err := c.Read(context.Background(), "docs://handbook/../../etc/passwd"); err == nil {
		t.Error("a path leaving the folder was read")
	}
	if _, err := c.Read(context.Background(), URL("handbook", "broken.pdf", 0)); !errors.Is(err, ErrNotFound) {
		t.Errorf("a skipped file: %v", err)
	}
}

func TestAddressesNameTheFolderNotTheLocalPath(t *testing.T) {
	roots := Roots([]string{"/srv/Team Docs", "/mnt/b/team-docs", "/x/"})
	if roots[0].Name != "team-docs" || roots[1].Name != "team-docs-2" || roots[2].Name != "x" {
		t.Errorf("roots = %+v", roots)
	}
	u := URL("team-docs", "Q3 report/plan #2.pdf", 7)
	if strings.Contains(u, "/srv") || u != "docs://team-docs/Q3%20report/plan%20%232.pdf#page=7" {
		t.Errorf("URL = %q", u)
	}
	root, rel, page, ok := ParseURL(u)
	if !ok || root != "team-docs" || rel != "Q3 report/plan #2.pdf" || page != 7 {
		t.Errorf("ParseURL = %q %q %d %v", root, rel, page, ok)
	}
	if _, _, _, ok := ParseURL("https://example.org/a.pdf"); ok {
		t.Error("a web URL parsed as a document")
	}
	if Cite("a/b.pdf", 3) != "a/b.pdf, p. 3" || Cite("a.md", 0) != "a.md" {
		t.Error("Cite")
	}
}

func TestAFolderThatCannotBeListedKeepsItsDocuments(t *testing.T) {
	dir := folder(t)
	c := open(t, dir)
	update(t, c)
	moved := dir + "-away"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.FolderErrors) != 1 || !strings.HasPrefix(rep.FolderErrors[0].Error(), "folder handbook: ") || rep.Removed != 0 {
		t.Errorf("report %+v", rep)
	}
	if st := c.Status(); st.Documents != 5 {
		t.Errorf("documents after an unreadable folder: %d, want 5 kept", st.Documents)
	}
	if hits, _ := c.Search(context.Background(), "Powered by TCPDF", 1); len(hits) != 1 {
		t.Errorf("kept documents not searched: %+v", hits)
	}
}

// TestIndexesSavedWebPagesAsTheirMainText: an .html (or .htm) file of the
// collection is read by extract like any document: its main text is
// indexed and read, its menus, scripts and markup are not.
func TestIndexesSavedWebPagesAsTheirMainText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Handbook")
	page := `<!DOCTYPE html><html><head><title>Cyclone season</title><script>trackVisitor()</script></head><body>
<nav><a href="/">Home</a> <a href="/careers">Careers</a></nav>
<article><h1>Cyclone season</h1>
<p>Cyclones over the Bay of Bengal peak in October and November, when sea surface temperatures stay above twenty-eight degrees.</p>
<p>The coastal districts of Odisha evacuate villages two days before landfall, guided by the storm surge forecasts.</p>
</article><footer>Copyright notice. Subscribe to the newsletter.</footer></body></html>`
	writeFile(t, filepath.Join(dir, "pages", "cyclones.html"), page)
	writeFile(t, filepath.Join(dir, "pages", "old.HTM"), strings.ReplaceAll(page, "Cyclone", "Typhoon"))
	c := open(t, dir)
	if rep := update(t, c); rep.Added != 2 || rep.Skipped != 0 {
		t.Fatalf("report = %+v", rep)
	}
	hits, err := c.Search(context.Background(), "Odisha storm surge evacuate", 3)
	if err != nil || len(hits) != 2 || hits[0].Kind != string(extract.KindHTML) {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	if hits, _ := c.Search(context.Background(), "trackVisitor careers newsletter", 3); len(hits) != 0 {
		t.Errorf("boilerplate was indexed: %+v", hits)
	}
	d, err := c.Read(context.Background(), URL("handbook", "pages/cyclones.html", 0))
	if err != nil || d.Kind != string(extract.KindHTML) || !strings.Contains(d.Text, "Bay of Bengal peak in October") ||
		strings.ContainsAny(d.Text, "<>") || strings.Contains(d.Text, "Subscribe") {
		t.Errorf("read: %+v, %v", d, err)
	}
}

// pageAt returns the page (from 1) on which byte offset off lies, given the
// pages' start offsets, or 0 when starts is empty.
func pageAt(starts []int, off int) int {
	n := 0
	for i, s := range starts {
		if s > off {
			break
		}
		n = i + 1
	}
	return n
}
