package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// A report's claims in its body: footnotes quoting the source of each
// verified claim, a mark on each unsupported one, and the unsupported ones
// listed once per sentence under "How this report was made".

// groupBySentence groups claims of one sentence (one claim per source it
// cites), in the order of their first claim, so that a sentence is listed
// once.
func groupBySentence(cs []Claim) [][]Claim {
	type key struct {
		part     int
		sentence string
	}
	index := map[key]int{}
	var out [][]Claim
	for _, c := range cs {
		k := key{c.Part, c.Sentence}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}

// unsupportedWhy says why a report's claim is unsupported, naming the source
// by its reference number rather than the run's source id.
func unsupportedWhy(c Claim) string {
	if strings.Contains(c.Reason, "another source") {
		return fmt.Sprintf("the quote given for [%d] is from another source the run read", c.Ref)
	}
	return strings.Replace(c.Reason, "the cited source", fmt.Sprintf("source [%d]", c.Ref), 1)
}

// footnotes number a report's verified claims and place a footnote marker
// after the citation of each, quoting the passage of the source; an
// unsupported claim's citation is marked "(unverified)" instead, so the
// reader of the body sees it too.
type footnotes struct {
	byPart      map[int][]footnote
	all         []footnote
	unsupported map[int][]Claim // by part
}

// unverifiedMark is what follows the citation of an unsupported claim in a
// report's body: the marker's only source, or the one named when the marker
// cites several.
func unverifiedMark(marker string, ref int) string {
	if len(parseMarker(marker[1:len(marker)-1])) > 1 {
		return fmt.Sprintf(" (unverified: [%d])", ref)
	}
	return " (unverified)"
}

// footnote is one verified claim's footnote.
type footnote struct {
	n     int
	claim Claim
}

func newFootnotes(rep *Report) *footnotes {
	f := &footnotes{byPart: map[int][]footnote{}, unsupported: map[int][]Claim{}}
	for _, c := range rep.Claims {
		if c.Status != ClaimVerified {
			f.unsupported[c.Part] = append(f.unsupported[c.Part], c)
			continue
		}
		if c.Found == "" {
			continue
		}
		fn := footnote{n: len(f.all) + 1, claim: c}
		f.all = append(f.all, fn)
		f.byPart[c.Part] = append(f.byPart[c.Part], fn)
	}
	return f
}

// mark returns text with a footnote marker ("[^n]") after the last citation
// of each verified claim in it. A claim whose sentence is not found in text
// keeps its footnote without a marker.
func (f *footnotes) mark(part int, text string) string {
	type insert struct {
		at   int
		mark string
	}
	var ins []insert
	// place finds where in text the claim's mark goes: after the marker of
	// its sentence that cites its source; ok is false when the sentence is
	// not in text.
	place := func(c Claim) (at int, marker string, ok bool) {
		i := strings.Index(text, c.Sentence)
		if i < 0 {
			return 0, "", false
		}
		ms := markerRE().FindAllStringIndex(c.Sentence, -1)
		if len(ms) == 0 {
			return 0, "", false
		}
		m := ms[len(ms)-1] // after the marker that cites the claim's source
		for _, cand := range ms {
			if slices.Contains(parseMarker(c.Sentence[cand[0]+1:cand[1]-1]), c.Ref) {
				m = cand
				break
			}
		}
		return i + m[1], c.Sentence[m[0]:m[1]], true
	}
	for _, fn := range f.byPart[part] {
		if at, _, ok := place(fn.claim); ok {
			ins = append(ins, insert{at: at, mark: fmt.Sprintf("[^%d]", fn.n)})
		}
	}
	for _, c := range f.unsupported[part] {
		at, marker, ok := place(c)
		mark := ""
		if ok {
			mark = unverifiedMark(marker, c.Ref)
		}
		if ok && !slices.Contains(ins, insert{at: at, mark: mark}) {
			ins = append(ins, insert{at: at, mark: mark})
		}
	}
	// Insert from the end, keeping footnotes of one place in order.
	slices.SortStableFunc(ins, func(a, b insert) int { return cmp.Compare(b.at, a.at) })
	for k := 0; k < len(ins); {
		j := k
		var marks strings.Builder
		for j < len(ins) && ins[j].at == ins[k].at {
			j++
		}
		for m := k; m < j; m++ {
			marks.WriteString(ins[m].mark)
		}
		text = text[:ins[k].at] + marks.String() + text[ins[k].at:]
		k = j
	}
	return text
}

// write adds the footnote definitions: the source's own words for each
// claim, citing the page for a PDF ("[3, p. 7]").
func (f *footnotes) write(b *strings.Builder) {
	for _, fn := range f.all {
		fmt.Fprintf(b, "[^%d]: %s “%s”\n", fn.n, fn.claim.Cite(), strings.ReplaceAll(flatLine(fn.claim.Found), "”", "\""))
	}
	if len(f.all) > 0 {
		b.WriteString("\n")
	}
}
