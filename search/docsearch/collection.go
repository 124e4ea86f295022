package docsearch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/extract"
)

// Bounds of the reading of one file of the collection. A collection's
// documents are longer than web pages, so more of each is indexed than a
// fetched page keeps; what a run reads of one is bounded like a page
// (ReadRunes).
const (
	// MaxFileBytes is the largest file read; larger ones are skipped.
	MaxFileBytes = 32 << 20
	// MaxFileRunes caps the text indexed of one file.
	MaxFileRunes = 1 << 20
	// ReadRunes caps the text a run reads of one document: the text from
	// the page that matched on, like a fetched page's.
	ReadRunes = extract.DefaultMaxRunes
	// fileTimeout bounds the extraction of one file.
	fileTimeout = 30 * time.Second
	// batchFiles and batchBytes bound one index batch.
	batchFiles = 256
	batchBytes = 32 << 20
	// openTimeout is how long Open waits for another process to let go of
	// the index.
	openTimeout = 2 * time.Second
)

// Config describes a collection.
type Config struct {
	// Dirs are the collection's folders (absolute paths).
	Dirs []string
	// IndexDir is the folder of the index (created when missing).
	IndexDir string
	// Clock is the clock of Status's times and of the updates' durations;
	// nil means the real clock.
	Clock  quartz.Clock
	Logger *slog.Logger
}

// Root is one folder of the collection.
type Root struct {
	// Name is how addresses and citations name it: its base name, made
	// safe for an address, with "-2", "-3" added to tell equal names apart.
	Name string
	Dir  string
}

// Collection is an indexed document collection. It is safe for concurrent
// use: searches and reads go on while Update runs (they see the index as
// of the last batch written). Close releases the index.
type Collection struct {
	roots  []Root
	dir    string
	clock  quartz.Clock
	log    *slog.Logger
	index  bleve.Index
	update sync.Mutex // one Update at a time
	mu     sync.RWMutex
	m      *manifest // guarded by mu; replaced, never changed in place, once published
}

// ErrInUse is returned by Open when another process holds the index.
var ErrInUse = errors.New("the document index is in use by another process")

// Open opens the collection's index in cfg.IndexDir, making it when
// missing (an index of an older layout is made again). It does not read
// the folders: Update does.
func Open(cfg Config) (*Collection, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("docsearch: no folders")
	}
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Collection{roots: Roots(cfg.Dirs), dir: cfg.IndexDir, clock: cfg.Clock, log: cfg.Logger}
	if err := os.MkdirAll(filepath.Dir(cfg.IndexDir), 0o755); err != nil {
		return nil, fmt.Errorf("document index: %w", err)
	}
	idx, err := openIndex(cfg.IndexDir)
	if err != nil {
		return nil, err
	}
	raw, err := idx.GetInternal(manifestKey)
	m, derr := decodeManifest(raw)
	if err != nil || derr != nil || m.Version != manifestVersion {
		c.log.Warn("document index unreadable or of another version; making it again", "dir", cfg.IndexDir)
		_ = idx.Close()
		if err := os.RemoveAll(cfg.IndexDir); err != nil {
			return nil, fmt.Errorf("document index: %w", err)
		}
		if idx, err = openIndex(cfg.IndexDir); err != nil {
			return nil, err
		}
		m = newManifest()
	}
	c.index, c.m = idx, m
	return c, nil
}

func openIndex(dir string) (bleve.Index, error) {
	runtime := map[string]any{"bolt_timeout": openTimeout.String()}
	idx, err := bleve.OpenUsing(dir, runtime)
	if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		idx, err = bleve.NewUsing(dir, indexMapping(), bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, runtime)
	}
	if err != nil {
		if strings.Contains(err.Error(), "timeout") {
			return nil, fmt.Errorf("%w (%s)", ErrInUse, dir)
		}
		return nil, fmt.Errorf("document index %s: %w", dir, err)
	}
	return idx, nil
}

// Fields of an index document (one page of a PDF, or a whole file).
const (
	fieldText  = "text"
	fieldTitle = "title"
)

// indexMapping is the index's schema: English-analysed text and title
// (the title also holds the file's path), BM25 scoring.
func indexMapping() mapping.IndexMapping {
	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = true
	text.IncludeTermVectors = false
	text.IncludeInAll = false
	title := bleve.NewTextFieldMapping()
	title.Analyzer = en.AnalyzerName
	title.Store = false
	title.IncludeTermVectors = false
	title.IncludeInAll = false
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldText, text)
	doc.AddFieldMappingsAt(fieldTitle, title)
	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.ScoringModel = "bm25"
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m
}

// Roots names the folders dirs.
func Roots(dirs []string) []Root {
	roots := make([]Root, 0, len(dirs))
	seen := map[string]int{}
	for _, d := range dirs {
		name := rootName(filepath.Base(d))
		seen[name]++
		if n := seen[name]; n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		roots = append(roots, Root{Name: name, Dir: d})
	}
	return roots
}

// rootName keeps letters, digits, '-' and '.' of base, lower-cased.
func rootName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-.")
	if name == "" {
		return "docs"
	}
	return name
}

// Roots returns the collection's folders.
func (c *Collection) Roots() []Root { return append([]Root(nil), c.roots...) }

// Close releases the index; it waits for an Update in progress to end (cancel its context first).
func (c *Collection) Close() error {
	c.update.Lock()
	defer c.update.Unlock()
	return c.index.Close()
}

func (c *Collection) manifest() *manifest {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m
}

func (c *Collection) root(name string) (Root, bool) {
	for _, r := range c.roots {
		if r.Name == name {
			return r, true
		}
	}
	return Root{}, false
}

// walk lists the regular files of every folder with their size and
// modification time, keyed "<root>/<rel>". Hidden files and folders (a
// name starting with '.') and symbolic links are left out; a folder that
// cannot be listed is in failed, by root name.
func (c *Collection) walk(ctx context.Context) (files map[string]*entry, failed map[string]error) {
	files, failed = map[string]*entry{}, map[string]error{}
	for _, r := range c.roots {
		err := filepath.WalkDir(r.Dir, func(path string, d fs.DirEntry, err error) error {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			if err != nil {
				if path == r.Dir {
					return err
				}
				c.log.Warn("document collection: cannot read", "path", path, "err", err)
				return nil
			}
			if path != r.Dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil // removed while walking
			}
			rel, err := filepath.Rel(r.Dir, path)
			if err != nil {
				return nil
			}
			rel = filepath.ToSlash(rel)
			files[r.Name+"/"+rel] = &entry{Root: r.Name, Rel: rel, Size: info.Size(), ModTime: info.ModTime().UnixNano()}
			return nil
		})
		if err != nil {
			failed[r.Name] = fmt.Errorf("folder %s: %w", r.Name, err)
		}
	}
	return files, failed
}

// path is the file of e on disk.
func (c *Collection) path(e *entry) (string, bool) {
	r, ok := c.root(e.Root)
	if !ok {
		return "", false
	}
	return filepath.Join(r.Dir, filepath.FromSlash(e.Rel)), true
}

func itoa(n int) string { return strconv.Itoa(n) }
