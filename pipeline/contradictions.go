package pipeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/researchbot/researchbot/checkpoints"
)

// DisagreementTitle is the title of the report section, built in code from
// the analysis, that states where sources disagree, citing both sides.
const DisagreementTitle = "Where sources disagree"

// Readings a person may choose for a contradiction.
const (
	ReadingA = "a"
	ReadingB = "b"
)

// Contradiction is a point on which the sources read disagree (seed 001:
// documented with both positions and flagged for human review).
type Contradiction struct {
	Topic      string `json:"topic"`
	A          Side   `json:"a"`
	B          Side   `json:"b"`
	Assessment string `json:"assessment,omitempty"`
	// Chosen is the reading a person chose at the draft review (ReadingA or
	// ReadingB), ChosenBy who chose it.
	Chosen   string `json:"chosen,omitempty"`
	ChosenBy string `json:"chosen_by,omitempty"`
}

// Side is one position in a disagreement and the pages that hold it.
type Side struct {
	Claim   string `json:"claim"`
	Sources []int  `json:"sources"` // fetched source ids
}

// UnmarshalJSON reads a contradiction, including the plain sentence that
// runs saved before contradictions had sides.
func (c *Contradiction) UnmarshalJSON(b []byte) error {
	var text string
	if json.Unmarshal(b, &text) == nil {
		*c = Contradiction{Topic: text}
		return nil
	}
	type plain Contradiction
	return json.Unmarshal(b, (*plain)(c))
}

// Cited reports whether both sides name a page the run read.
func (c Contradiction) Cited() bool { return len(c.A.Sources) > 0 && len(c.B.Sources) > 0 }

// Side returns the side a reading names.
func (c Contradiction) Side(reading string) Side {
	if reading == ReadingB {
		return c.B
	}
	return c.A
}

// newContradictions keeps the analyst's disagreements that say something,
// with only source ids of pages the run read.
func newContradictions(out []ContradictionOutput, fetched map[int]bool) []Contradiction {
	side := func(s SideOutput) Side {
		var ids []int
		for _, id := range s.SourceIDs {
			if fetched[id] && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return Side{Claim: strings.TrimSpace(s.Claim), Sources: ids}
	}
	var cs []Contradiction
	for _, o := range out {
		c := Contradiction{Topic: strings.TrimSpace(o.Topic), A: side(o.SideA), B: side(o.SideB), Assessment: strings.TrimSpace(o.Assessment)}
		if c.A.Claim == "" && c.B.Claim == "" && c.Topic == "" {
			continue
		}
		cs = append(cs, c)
	}
	return cs
}

// citedContradictions returns the analysis' disagreements whose two sides
// both cite a page read: those the report and the draft review show.
func citedContradictions(a *Analysis) []Contradiction {
	if a == nil {
		return nil
	}
	var out []Contradiction
	for _, c := range a.Contradictions {
		if c.Cited() {
			out = append(out, c)
		}
	}
	return out
}

// disagreementSection is the report section that states every cited
// disagreement: its topic, each side with its citations, the analyst's
// assessment and the reading a person chose. ok is false when there is none.
func disagreementSection(a *Analysis) (s Section, ok bool) {
	cs := citedContradictions(a)
	if len(cs) == 0 {
		return Section{}, false
	}
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if t := strings.TrimRight(flatLine(c.Topic), "."); t != "" {
			fmt.Fprintf(&b, "**%s.** ", t)
		}
		fmt.Fprintf(&b, "%s %s", sideSentence(c.A), sideSentence(c.B))
		if c.Assessment != "" {
			fmt.Fprintf(&b, " _Assessment:_ %s", flatLine(c.Assessment))
		}
		if c.Chosen != "" {
			fmt.Fprintf(&b, "\n\n_Reading chosen by %s:_ %s", nonBlank(c.ChosenBy, "a person"), strings.TrimRight(flatLine(c.Side(c.Chosen).Claim), "."))
		}
	}
	return Section{Title: DisagreementTitle, Content: b.String()}, true
}

// sideSentence renders one side as a sentence ending in its citations.
func sideSentence(s Side) string {
	claim := strings.TrimRight(flatLine(nonBlank(s.Claim, "One source differs")), ". ")
	return fmt.Sprintf("%s [%s].", claim, joinInts(s.Sources))
}

// disagreementViews are the draft review's view of the cited disagreements,
// numbered as the readings field numbers them.
func disagreementViews(r *Run) []DisagreementView {
	side := func(s Side) SideView {
		v := SideView{Claim: flatLine(s.Claim)}
		for _, id := range s.Sources {
			v.Sources = append(v.Sources, sourceRef(id, r.Pages))
		}
		return v
	}
	var out []DisagreementView
	for i, c := range citedContradictions(r.Analysis) {
		out = append(out, DisagreementView{N: i + 1, Topic: flatLine(c.Topic), A: side(c.A), B: side(c.B), Assessment: flatLine(c.Assessment), Chosen: c.Chosen})
	}
	return out
}

// readingOptions are the choices of the draft review's readings field: for
// each cited disagreement n, "na" and "nb" (n from 1).
func readingOptions(a *Analysis) []checkpoints.Option {
	var out []checkpoints.Option
	for i, c := range citedContradictions(a) {
		for _, r := range []string{ReadingA, ReadingB} {
			out = append(out, checkpoints.Option{
				Value: fmt.Sprintf("%d%s", i+1, r),
				Label: optionLabel(fmt.Sprintf("%d%s · %s", i+1, strings.ToUpper(r), flatLine(c.Side(r).Claim))),
			})
		}
	}
	return out
}

// parseReading reads a readings value ("2b") as a disagreement number from 1
// and a reading.
func parseReading(v string) (n int, reading string, ok bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if len(v) < 2 {
		return 0, "", false
	}
	reading = v[len(v)-1:]
	if reading != ReadingA && reading != ReadingB {
		return 0, "", false
	}
	if _, err := fmt.Sscan(v[:len(v)-1], &n); err != nil || n < 1 {
		return 0, "", false
	}
	return n, reading, true
}
