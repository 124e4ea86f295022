package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/researchtest"
)

// modulePDF returns a PDF no one here wrote, from a PDF library's test
// data in the module cache, skipping the test when there is none.
func modulePDF(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no module cache: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "github.com/dslipak/pdf@v0.0.2/testdata/story_*.pdf"))
	if len(files) == 0 {
		t.Skip("no PDFs of github.com/dslipak/pdf in the module cache (go mod download fetches them)")
	}
	return files[0]
}

// TestRunWithFilesCitesThemByName: `run --file` with a real PDF and a
// Markdown file makes them the run's first sources; the report cites the
// PDF by its name (never its local path) and lists both files.
func TestRunWithFilesCitesThemByName(t *testing.T) {
	body, err := os.ReadFile(modulePDF(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pdfPath, mdPath := filepath.Join(dir, "report.pdf"), filepath.Join(dir, "notes.md")
	if err := os.WriteFile(pdfPath, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mdPath, []byte("# Notes\n\nInstallers say defrost cycles cost energy in the coldest weeks.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, &researchtest.Researcher{})
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"run", "--mode", "auto", "--file", pdfPath, "--file", mdPath, "How well do heat pumps work in cold climates?"},
		w.env(nil), strings.NewReader(""), &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	report := out.String()
	for _, want := range []string{"[1] report.pdf — file given to this run, PDF, ", "- 2 files given: report.pdf (PDF, ", ", notes.md\n"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report does not say %q:\n%s", want, report)
		}
	}
	if !strings.Contains(errb.String(), "files attached, read first: report.pdf (PDF, ") {
		t.Errorf("the terminal does not say the files are attached:\n%s", errb.String())
	}
	if strings.Contains(report, dir) || strings.Contains(errb.String(), dir) {
		t.Errorf("the local path %s was shown", dir)
	}
}

// TestRunFileProblemsExit2: a missing file and a kind not read stop the
// run before it starts, with exit 2 and one line naming the file and the
// kinds accepted.
func TestRunFileProblemsExit2(t *testing.T) {
	dir := t.TempDir()
	sheet := filepath.Join(dir, "budget.xlsx")
	if err := os.WriteFile(sheet, []byte("PK\x03\x04 not a document we read"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "gone.pdf")
	for path, why := range map[string]string{
		missing: "no such file",
		sheet:   "unsupported kind of document",
		dir:     "not a regular file",
	} {
		code, stdout, stderr := runExit(t, "run", "--file", path, "How well do heat pumps work in cold climates?")
		msg := strings.TrimSpace(stderr)
		if code != 2 || stdout != "" || strings.Count(msg, "\n") != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line", path, code, stdout, stderr)
		}
		for _, want := range []string{"researchbot: --file " + path + ": " + why, "accepted: PDF (application/pdf), Word (.docx)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q does not say %q", path, msg, want)
			}
		}
	}
	if code, _, stderr := runExit(t, "run", "--file", "", "How well do heat pumps work in cold climates?"); code != 2 || !strings.Contains(stderr, `invalid value "" for --file: want the path of a file`) {
		t.Errorf("empty --file: exit %d, %q", code, stderr)
	}
}

// runExit runs the program in process as main does: an exit error's
// message is printed on stderr.
func runExit(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
	return exitCode(err, &errb), out.String(), errb.String()
}

// storyHTML is a saved web page: a menu, an article and a footer.
const storyHTML = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Heat pumps in the cold</title>
<script>track()</script></head><body><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<article><h1>Heat pumps in the cold</h1>
<p>Field trials in Norway found that air-source heat pumps kept homes warm at minus twenty degrees, with a seasonal efficiency above two and a half.</p>
<p>Installers say defrost cycles cost energy in the coldest weeks, and that sizing the unit for the design temperature matters most.</p>
</article><footer>All rights reserved. Subscribe to our newsletter.</footer></body></html>`

// TestRunWithHTMLFile: `run --file story.html` reads a saved web page as
// the run's first source (its main text, not its markup), cited by name.
func TestRunWithHTMLFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "story.html")
	if err := os.WriteFile(path, []byte(storyHTML), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := extractFile(context.Background(), path, []byte(storyHTML))
	if err != nil {
		t.Fatalf("extractFile: %v", err)
	}
	if f.Name != "story.html" || f.Kind != "html" || !strings.Contains(f.Text, "defrost cycles cost energy") ||
		strings.ContainsAny(f.Text, "<>") || strings.Contains(f.Text, "track()") || strings.Contains(f.Text, "Subscribe") {
		t.Errorf("file read as %+v", f)
	}
	w := newWorld(t, &researchtest.Researcher{})
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"run", "--mode", "auto", "--file", path, "How well do heat pumps work in cold climates?"},
		w.env(nil), strings.NewReader(""), &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if want := "[1] story.html — file given to this run"; !strings.Contains(out.String(), want) {
		t.Errorf("the report does not say %q:\n%s", want, out.String())
	}
	if !strings.Contains(errb.String(), "files attached, read first: story.html") {
		t.Errorf("the terminal does not say the file is attached:\n%s", errb.String())
	}
}
