package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/researchtest"
)

// docsEnv is a collection folder "manuals" with TCPDF's sixteen-page
// sample PDF (shipped in a PDF library's module), a Markdown note and a
// damaged PDF, and its index folder, as the environment names them.
func docsEnv(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no module cache: %v", err)
	}
	pdf, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "github.com/dslipak/pdf@v0.0.2/testdata/tableOfContentWithHeader_tcpdf-org__pdf17_trailer.pdf"))
	if err != nil {
		t.Skipf("the TCPDF sample is not in the module cache: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "manuals")
	for name, body := range map[string]string{
		"guides/toc.pdf": string(pdf),
		"notes/tcpdf.md": "# TCPDF notes\n\nTCPDF writes the table of contents after the chapters.\n",
		"broken.pdf":     "%PDF-1.7\nnot a PDF body\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]string{"DOCS_DIR": dir, "DOCS_INDEX_DIR": filepath.Join(t.TempDir(), "index")}
}

func TestDocsIndexStatusAndSearch(t *testing.T) {
	env := docsEnv(t)
	code, _, stderr := runArgs(t, env, "docs", "status")
	if code != 1 || !strings.Contains(stderr, "have not been indexed yet; run 'researchbot docs index'") {
		t.Errorf("status before indexing: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr := runArgs(t, env, "docs", "index")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Indexed 2 documents (17 pages) in ") || !strings.Contains(stdout, ": 3 added, 0 changed, 0 removed, 0 unchanged; 1 skipped in all") {
		t.Fatalf("index: exit %d, stderr %q, stdout %q", code, stderr, stdout)
	}
	if code, stdout, _ = runArgs(t, env, "docs", "index"); code != 0 || !strings.Contains(stdout, ": 0 added, 0 changed, 0 removed, 3 unchanged;") {
		t.Errorf("index again: exit %d, %q", code, stdout)
	}

	code, stdout, stderr = runArgs(t, env, "docs", "status")
	if code != 0 || stderr != "" {
		t.Fatalf("status: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Index: " + env["DOCS_INDEX_DIR"] + " (", "Documents: 2 (17 pages), skipped: 1", "manuals  2          " + env["DOCS_DIR"], "manuals/broken.pdf  damaged PDF"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, stdout)
		}
	}
	code, stdout, _ = runArgs(t, env, "docs", "status", "--json")
	var st struct {
		Documents int
		Skipped   []struct{ Path, Reason string }
	}
	if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.Documents != 2 || len(st.Skipped) != 1 {
		t.Errorf("status --json: exit %d, %v: %s", code, err, stdout)
	}

	code, stdout, stderr = runArgs(t, env, "docs", "search", "Powered by TCPDF")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "[1] guides/toc.pdf, p. 16 — internal documents (manuals), score ") || !strings.Contains(stdout, "Powered by TCPDF") {
		t.Errorf("search: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runArgs(t, env, "docs", "search", "--limit", "1", "--json", "table of contents after the chapters")
	lines := decodeLines[struct {
		Folder, Path, URL, Snippet string
		Page                       int
		Score                      float64
	}](t, stdout)
	if code != 0 || len(lines) != 1 || lines[0].Path != "notes/tcpdf.md" || lines[0].URL != "docs://manuals/notes/tcpdf.md" || lines[0].Score <= 0 {
		t.Errorf("search --json: exit %d, %+v", code, lines)
	}
	if code, stdout, _ = runArgs(t, env, "docs", "search", "zeppelin"); code != 0 || stdout != "No document matches \"zeppelin\".\n" {
		t.Errorf("no match: exit %d, %q", code, stdout)
	}
	if strings.Contains(stdout, env["DOCS_INDEX_DIR"]) {
		t.Error("search printed a local path")
	}
}

func TestDocsUsageMistakesExit2(t *testing.T) {
	env := docsEnv(t)
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env, []string{"docs"}, "researchbot docs: name what to do: index, status, search"},
		{env, []string{"docs", "idnex"}, `unknown command "idnex" for "researchbot docs"; did you mean "index"?`},
		{env, []string{"docs", "search"}, `give the words to search for`},
		{env, []string{"docs", "search", "--limit", "0", "x"}, "--limit must be at least 1"},
		{env, []string{"docs", "status", "extra"}, `takes no arguments (got "extra")`},
		{nil, []string{"docs", "index"}, "DOCS_DIR is not set"},
		{map[string]string{"DOCS_DIR": "/no/such/folder"}, []string{"docs", "status"}, `DOCS_DIR: "/no/such/folder" is not a readable folder`},
	} {
		code, stdout, stderr := runArgs(t, tc.env, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestSourcesListsTheDocumentCollection: `sources` gives the collection a
// line with its document count and the index's age, failing before the
// first indexing.
func TestSourcesListsTheDocumentCollection(t *testing.T) {
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	env := docsEnv(t)
	env["SEARXNG_URL"] = web.URL()
	code, stdout, _ := runArgs(t, env, "sources")
	if code != 1 || !strings.Contains(stdout, "documents  documents") || !strings.Contains(stdout, "FAILED") || !strings.Contains(stdout, "folders: manuals; not indexed yet") {
		t.Errorf("before indexing: exit %d:\n%s", code, stdout)
	}
	if code, _, stderr := runArgs(t, env, "docs", "index"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	code, stdout, stderr := runArgs(t, env, "sources")
	line := strings.Split(strings.TrimSpace(stdout), "\n")[2]
	if code != 0 || strings.Join(strings.Fields(line)[:4], " ") != "documents documents web,academic ok" || !strings.Contains(line, "folders: manuals; 2 documents (17 pages), 1 skipped; index checked 0s ago") {
		t.Errorf("after indexing: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
}
