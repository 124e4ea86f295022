package eval

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed corpus
var corpus embed.FS

// Corpus is the built-in collection: its documents at their paths within
// the collection folder, and SOURCES.md (each document's origin and
// licence).
func Corpus() fs.FS {
	sub, err := fs.Sub(corpus, "corpus")
	if err != nil {
		panic(err)
	}
	return sub
}

// SourcesFile is the file of the corpus that records each document's
// origin and licence; it is not searched.
const SourcesFile = "SOURCES.md"

// WriteCorpus writes the built-in collection's documents (not SourcesFile)
// into dir, which must exist, so that it can be indexed as a folder.
func WriteCorpus(dir string) error {
	return fs.WalkDir(Corpus(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if p == SourcesFile {
			return nil
		}
		b, err := fs.ReadFile(Corpus(), p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
