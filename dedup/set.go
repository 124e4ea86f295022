package dedup

import (
	"slices"
	"strings"
	"sync"
)

// Set remembers what has been seen: normalised URLs, DOIs, arXiv identifiers
// and content fingerprints. Research streams persist a Set (via Snapshot and
// Restore) so that a digest reports only what earlier digests did not.
// A Set is safe for concurrent use.
type Set struct {
	mu    sync.Mutex
	urls  map[string]bool
	dois  map[string]bool
	arxiv map[string]bool
	// hashes holds the fingerprints; blocks indexes them by each of their four
	// 16-bit blocks. Two fingerprints within 3 bits of each other agree on at
	// least one block (three differing bits spoil at most three blocks), so
	// only fingerprints sharing a block need comparing.
	hashes []uint64
	blocks [4]map[uint16][]uint64
}

// Snapshot is the plain content of a Set, for persisting (it marshals to JSON
// as is). Slices are sorted.
type Snapshot struct {
	URLs      []string `json:"urls,omitempty"`
	DOIs      []string `json:"dois,omitempty"`
	ArxivIDs  []string `json:"arxiv_ids,omitempty"`
	Simhashes []uint64 `json:"simhashes,omitempty"`
}

// NewSet returns an empty Set.
func NewSet() *Set {
	s := &Set{urls: map[string]bool{}, dois: map[string]bool{}, arxiv: map[string]bool{}}
	for i := range s.blocks {
		s.blocks[i] = map[uint16][]uint64{}
	}
	return s
}

// Restore returns a Set holding the contents of snap. Entries are normalised
// again, so a snapshot written by hand or by an older version still matches.
func Restore(snap Snapshot) *Set {
	s := NewSet()
	for _, u := range snap.URLs {
		if k := urlKey(u); k != "" {
			s.urls[k] = true
		}
	}
	for _, d := range snap.DOIs {
		if d = NormalizeDOI(d); d != "" {
			s.dois[d] = true
		}
	}
	for _, a := range snap.ArxivIDs {
		if a = NormalizeArxivID(a); a != "" {
			s.arxiv[a] = true
		}
	}
	for _, h := range snap.Simhashes {
		s.addHash(h)
	}
	return s
}

// Snapshot returns the contents of s as sorted plain slices.
func (s *Set) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{
		URLs:      sortedKeys(s.urls),
		DOIs:      sortedKeys(s.dois),
		ArxivIDs:  sortedKeys(s.arxiv),
		Simhashes: slices.Sorted(slices.Values(s.hashes)),
	}
	return snap
}

// Len returns the number of URLs, identifiers and fingerprints remembered.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.urls) + len(s.dois) + len(s.arxiv) + len(s.hashes)
}

// SeenURL reports whether u, or the DOI or arXiv identifier it carries (see
// Identifiers), was seen before, and remembers all of them. u is compared in
// normalised form (see NormalizeURL); a URL that cannot be normalised is
// compared as trimmed text. An empty u is never seen and not remembered.
func (s *Set) SeenURL(u string) bool {
	key := urlKey(u)
	if key == "" {
		return false
	}
	doi, arxivID := Identifiers(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := s.urls[key] || doi != "" && s.dois[doi] || arxivID != "" && s.arxiv[arxivID]
	s.urls[key] = true
	s.addIDs(doi, arxivID)
	return seen
}

// SeenIDs reports whether the DOI or the arXiv identifier (from a result's
// metadata; either may be empty) was seen before, and remembers both. They
// are compared in canonical form (NormalizeDOI, NormalizeArxivID).
func (s *Set) SeenIDs(doi, arxivID string) bool {
	doi, arxivID = canonIDs(NormalizeDOI(doi), NormalizeArxivID(arxivID))
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := doi != "" && s.dois[doi] || arxivID != "" && s.arxiv[arxivID]
	s.addIDs(doi, arxivID)
	return seen
}

// SeenContent reports whether a fingerprint within MaxHammingDistance of h
// was seen before, and remembers h. The zero fingerprint (text without words)
// is never seen and not remembered.
func (s *Set) SeenContent(h uint64) bool {
	if h == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := s.nearLocked(h)
	s.addHash(h)
	return seen
}

// SeenItem reports whether any key of one item — its URL (and the identifiers
// the URL carries), its DOI, its arXiv id, its content fingerprint — was seen
// before, checking all of them before remembering any, so that the keys of one
// item do not match each other. Empty keys and a zero fingerprint are skipped.
func (s *Set) SeenItem(u, doi, arxivID string, h uint64) bool {
	key := urlKey(u)
	uDOI, uArxiv := Identifiers(u)
	doi, arxivID = canonIDs(NormalizeDOI(doi), NormalizeArxivID(arxivID))
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := key != "" && s.urls[key] ||
		doi != "" && s.dois[doi] || uDOI != "" && s.dois[uDOI] ||
		arxivID != "" && s.arxiv[arxivID] || uArxiv != "" && s.arxiv[uArxiv] ||
		h != 0 && s.nearLocked(h)
	if key != "" {
		s.urls[key] = true
	}
	s.addIDs(doi, arxivID)
	s.addIDs(uDOI, uArxiv)
	s.addHash(h)
	return seen
}

// nearLocked reports whether a stored fingerprint is within
// MaxHammingDistance of h; the caller holds s.mu.
func (s *Set) nearLocked(h uint64) bool {
	for i, m := range s.blocks {
		for _, other := range m[block(h, i)] {
			if NearDuplicate(h, other) {
				return true
			}
		}
	}
	return false
}

// canonIDs derives the arXiv identifier from an arXiv DOI when it is missing.
func canonIDs(doi, arxivID string) (string, string) {
	if arxivID == "" {
		if m := arxivDOIRe.FindStringSubmatch(doi); m != nil {
			arxivID = NormalizeArxivID(m[1])
		}
	}
	return doi, arxivID
}

func (s *Set) addIDs(doi, arxivID string) {
	if doi != "" {
		s.dois[doi] = true
	}
	if arxivID != "" {
		s.arxiv[arxivID] = true
	}
}

// addHash stores h unless it is already stored; the caller holds s.mu (or owns s).
func (s *Set) addHash(h uint64) {
	if h == 0 || slices.Contains(s.blocks[0][block(h, 0)], h) {
		return
	}
	s.hashes = append(s.hashes, h)
	for i, m := range s.blocks {
		k := block(h, i)
		m[k] = append(m[k], h)
	}
}

func block(h uint64, i int) uint16 { return uint16(h >> (16 * i)) }

func urlKey(u string) string {
	if n, err := NormalizeURL(u); err == nil {
		return n
	}
	return strings.TrimSpace(u)
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
