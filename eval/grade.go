package eval

import (
	"net/url"
	"slices"
	"strings"

	"github.com/researchbot/researchbot/pipeline"
)

// Score is the grading of one question's run.
type Score struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	RunID    string `json:"run_id,omitempty"`
	// Status is the run's end ("completed", "partial", "failed", …); Error
	// says why a run that did not end with a report has none.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// Claims are the report's cited claims (one per sentence and source it
	// cites); Verified those whose quote was found in the cited source.
	Claims   int `json:"claims"`
	Verified int `json:"verified"`
	// Precise are the claims citing one of the question's documents.
	Precise int `json:"precise"`
	// Facts are the expected facts, each found or not.
	Facts []FactResult `json:"facts"`
	// Cited are the documents the report cites, as paths in the collection.
	Cited   []string `json:"cited"`
	CostUSD float64  `json:"cost_usd"`
	Seconds float64  `json:"seconds"`
}

// FactResult says whether a report states one expected fact: Found in its
// prose, Supported when a verified claim citing one of the question's
// documents states it.
type FactResult struct {
	Name      string `json:"name"`
	Found     bool   `json:"found"`
	Supported bool   `json:"supported"`
}

// VerifiedShare is the share of cited claims whose quote was found in the
// cited source; ok is false when the report has no cited claim.
func (s Score) VerifiedShare() (share float64, ok bool) { return ratio(s.Verified, s.Claims) }

// Precision is the share of cited claims that cite one of the question's
// documents; ok is false when the report has no cited claim.
func (s Score) Precision() (share float64, ok bool) { return ratio(s.Precise, s.Claims) }

// FactsFound counts the expected facts the report states.
func (s Score) FactsFound() int {
	n := 0
	for _, f := range s.Facts {
		if f.Found {
			n++
		}
	}
	return n
}

// FactShare is the share of expected facts the report states.
func (s Score) FactShare() (share float64, ok bool) { return ratio(s.FactsFound(), len(s.Facts)) }

// Missing lists the names of the expected facts the report does not state.
func (s Score) Missing() []string {
	var out []string
	for _, f := range s.Facts {
		if !f.Found {
			out = append(out, f.Name)
		}
	}
	return out
}

func ratio(n, of int) (float64, bool) {
	if of == 0 {
		return 0, false
	}
	return float64(n) / float64(of), true
}

// Grade scores a run's report against its question. A run without a
// report (rep nil) states no fact and has no claim.
func Grade(q Question, runID string, status pipeline.Status, rep *pipeline.Report) Score {
	s := Score{ID: q.ID, Question: q.Question, RunID: runID, Status: string(status), Facts: make([]FactResult, len(q.Facts)), Cited: []string{}}
	for i, f := range q.Facts {
		s.Facts[i].Name = f.Name
	}
	if rep == nil {
		return s
	}
	docOf := map[int]string{} // reference number → document path
	for _, ref := range rep.References {
		d := documentPath(ref)
		docOf[ref.N] = d
		if !slices.Contains(s.Cited, d) {
			s.Cited = append(s.Cited, d)
		}
	}
	var supported []string // sentences of verified claims citing a question's document
	for _, c := range rep.Claims {
		s.Claims++
		precise := slices.Contains(q.Documents, docOf[c.Ref])
		if precise {
			s.Precise++
		}
		if c.Status == pipeline.ClaimVerified {
			s.Verified++
			if precise {
				supported = append(supported, c.Sentence)
			}
		}
	}
	prose := Prose(rep)
	for i, f := range q.Facts {
		s.Facts[i].Found = f.Match(prose)
		s.Facts[i].Supported = slices.ContainsFunc(supported, f.Match)
	}
	return s
}

// Prose is the text of a report a fact is looked for in: its title,
// abstract, sections and conclusion, without the reference list (whose
// titles are the documents' names, not what the report says).
func Prose(rep *pipeline.Report) string {
	parts := []string{rep.Title, rep.Abstract}
	for _, sec := range rep.Sections {
		parts = append(parts, sec.Title, sec.Content)
	}
	parts = append(parts, rep.Conclusion)
	return strings.Join(parts, "\n\n")
}

// documentPath is a reference's document as a path in the collection: the
// path of a docs://folder/path address without its page, a file's name,
// or else the URL itself (a web page, which no question expects).
func documentPath(ref pipeline.Reference) string {
	if ref.File {
		return ref.Title
	}
	u, err := url.Parse(ref.URL)
	if err != nil || u.Scheme != "docs" {
		return ref.URL
	}
	return strings.TrimPrefix(u.Path, "/")
}
