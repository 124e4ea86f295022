package docsearch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Status describes the collection as its index holds it.
type Status struct {
	Roots []RootStatus `json:"roots"`
	// Documents is how many files are indexed, Pages how many index
	// documents (pages, or whole files) they make.
	Documents int `json:"documents"`
	Pages     int `json:"pages"`
	// Skipped are the files that could not be read, with the reason.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Checked is when the last Update ended (zero: never), Changed when
	// the last one that found a change did.
	Checked time.Time `json:"checked,omitzero"`
	Changed time.Time `json:"changed,omitzero"`
	// IndexDir is where the index lives and IndexBytes its size on disk.
	IndexDir   string `json:"index_dir"`
	IndexBytes int64  `json:"index_bytes"`
}

// RootStatus is one folder of the collection.
type RootStatus struct {
	Name      string `json:"name"`
	Dir       string `json:"dir"`
	Documents int    `json:"documents"`
}

// Skipped is a file left out of the index.
type Skipped struct {
	// Path is "<root>/<rel>".
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Status returns the collection's state without reading its folders.
func (c *Collection) Status() Status {
	m := c.manifest()
	st := Status{Checked: m.Checked, Changed: m.Changed, IndexDir: c.dir}
	per := map[string]int{}
	for _, key := range slices.Sorted(maps.Keys(m.Files)) {
		e := m.Files[key]
		if e.Skipped != "" {
			st.Skipped = append(st.Skipped, Skipped{Path: key, Reason: e.Skipped})
			continue
		}
		st.Documents++
		st.Pages += e.Parts
		per[e.Root]++
	}
	for _, r := range c.roots {
		st.Roots = append(st.Roots, RootStatus{Name: r.Name, Dir: r.Dir, Documents: per[r.Name]})
	}
	_ = filepath.WalkDir(c.dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				st.IndexBytes += info.Size()
			}
		}
		return nil
	})
	return st
}

// statusFile is the file, in the index's folder, where each Update leaves
// the collection's Status, so that it can be read while another process
// holds the index.
const statusFile = "researchbot-status.json"

// writeStatus leaves c's Status in the index's folder (replacing it whole).
func (c *Collection) writeStatus() error {
	raw, err := json.MarshalIndent(c.Status(), "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, statusFile+".tmp")
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.dir, statusFile))
}

// ErrNeverIndexed is ReadStatus's answer for an index no Update finished.
var ErrNeverIndexed = errors.New("the documents have not been indexed yet")

// ReadStatus returns the Status the last Update left in indexDir, without
// opening the index (which another process may hold).
func ReadStatus(indexDir string) (Status, error) {
	raw, err := os.ReadFile(filepath.Join(indexDir, statusFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Status{IndexDir: indexDir}, ErrNeverIndexed
	}
	if err != nil {
		return Status{IndexDir: indexDir}, err
	}
	var st Status
	if err := json.Unmarshal(raw, &st); err != nil {
		return Status{IndexDir: indexDir}, fmt.Errorf("%s: %w", statusFile, err)
	}
	return st, nil
}
