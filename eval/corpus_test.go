package eval

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/extract"
)

// TestBuiltinQuestionsAreAnsweredByTheirDocuments: every built-in question
// names documents the corpus ships, SOURCES.md records each document, and
// every expected fact is stated in the extracted text of one of the
// question's documents (so a perfect report can score 1.0).
func TestBuiltinQuestionsAreAnsweredByTheirDocuments(t *testing.T) {
	sources, err := fs.ReadFile(Corpus(), SourcesFile)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	err = fs.WalkDir(Corpus(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == SourcesFile {
			return err
		}
		if !strings.Contains(string(sources), "`"+p+"`") {
			t.Errorf("%s does not record the origin and licence of %s", SourcesFile, p)
		}
		b, err := fs.ReadFile(Corpus(), p)
		if err != nil {
			return err
		}
		doc, err := extract.Extract(context.Background(), b, extract.TypeByName(p), extract.Limits{MaxRunes: 1 << 20})
		if err != nil {
			t.Errorf("%s does not extract: %v", p, err)
			return nil
		}
		texts[p] = doc.Text
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pdfs int
	for p := range texts {
		if strings.HasSuffix(p, ".pdf") {
			pdfs++
		}
	}
	if pdfs < 1 {
		t.Errorf("the corpus ships %d PDFs, want at least one", pdfs)
	}
	for _, q := range Builtin().Questions {
		for _, d := range q.Documents {
			if _, ok := texts[d]; !ok {
				t.Errorf("%s names %s, which the corpus does not ship", q.ID, d)
			}
		}
		for _, f := range q.Facts {
			found := false
			for _, d := range q.Documents {
				found = found || f.Match(strings.Join(strings.Fields(texts[d]), " "))
			}
			if !found {
				t.Errorf("%s: no document of the question states %q (%s)", q.ID, f.Name, f.Pattern)
			}
		}
	}
}

// TestWriteCorpusWritesTheDocumentsOnly: the collection written for a run
// holds every document and not SOURCES.md.
func TestWriteCorpusWritesTheDocumentsOnly(t *testing.T) {
	dir := t.TempDir()
	if err := WriteCorpus(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, SourcesFile)); err == nil {
		t.Error("SOURCES.md was written into the collection")
	}
	for _, p := range []string{"manuals/fontconfig-user.pdf", "notes/go-godebug.md", "notes/s2-compression.md"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
