package docsearch

import (
	"encoding/json"
	"time"
)

// manifestKey is the index's internal key under which the manifest is kept,
// written in the same batch as the documents it describes.
var manifestKey = []byte("researchbot-docs-manifest")

// manifestVersion changes when the index's layout does; an index of another
// version is rebuilt.
const manifestVersion = 1

// manifest is what the index holds: one entry per file seen, read or
// skipped, keyed by "<root>/<rel>".
type manifest struct {
	Version int               `json:"version"`
	Files   map[string]*entry `json:"files"`
	// Checked is when the last Update ended; Changed when the last one
	// that changed something did.
	Checked time.Time `json:"checked,omitzero"`
	Changed time.Time `json:"changed,omitzero"`
}

// entry is one file of the collection as last seen.
type entry struct {
	Root string `json:"root"`
	Rel  string `json:"rel"`
	// Size and ModTime (Unix nanoseconds) decide whether the file changed.
	Size    int64 `json:"size"`
	ModTime int64 `json:"mtime"`
	// Kind, Title and Pages are the extracted document's; Parts is how
	// many index documents it has (its pages read, or 1).
	Kind  string `json:"kind,omitempty"`
	Title string `json:"title,omitempty"`
	Pages int    `json:"pages,omitempty"`
	Parts int    `json:"parts,omitempty"`
	// Truncated and Note are the extraction's.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
	// Skipped says why the file is not in the index ("" when it is).
	Skipped string `json:"skipped,omitempty"`
}

func newManifest() *manifest { return &manifest{Version: manifestVersion, Files: map[string]*entry{}} }

func decodeManifest(raw []byte) (*manifest, error) {
	if len(raw) == 0 {
		return newManifest(), nil
	}
	m := newManifest()
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, err
	}
	if m.Files == nil {
		m.Files = map[string]*entry{}
	}
	return m, nil
}

// partID is the index document id of part n of the file with key k: its
// page for a paged document, 0 otherwise.
func partID(key string, n int) string {
	return key + "#" + itoa(n)
}

// partIDs lists the index documents of e.
func (e *entry) partIDs(key string) []string {
	if e.Skipped != "" || e.Parts == 0 {
		return nil
	}
	if e.Pages == 0 {
		return []string{partID(key, 0)}
	}
	ids := make([]string, e.Parts)
	for i := range ids {
		ids[i] = partID(key, i+1)
	}
	return ids
}
