package docsearch

import (
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"time"
)

// Status describes the collection as its index holds it.
type Status struct {
	Roots []RootStatus
	// Documents is how many files are indexed, Pages how many index
	// documents (pages, or whole files) they make.
	Documents, Pages int
	// Skipped are the files that could not be read, with the reason.
	Skipped []Skipped
	// Checked is when the last Update ended (zero: never), Changed when
	// the last one that found a change did.
	Checked, Changed time.Time
	// IndexDir is where the index lives and IndexBytes its size on disk.
	IndexDir   string
	IndexBytes int64
}

// RootStatus is one folder of the collection.
type RootStatus struct {
	Root
	Documents int
}

// Skipped is a file left out of the index.
type Skipped struct {
	// Path is "<root>/<rel>".
	Path, Reason string
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
		st.Roots = append(st.Roots, RootStatus{Root: r, Documents: per[r.Name]})
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
