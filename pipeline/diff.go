package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/researchbot/researchbot/textmatch"
)

// rewrittenShare is the share of a section's words that must change for the
// section to count as rewritten rather than edited.
const rewrittenShare = 0.5

// DraftDiff is what a revision changed and why: the sections added, removed
// and changed, the cited claims added and dropped, and the critique items of
// the previous version it addressed.
type DraftDiff struct {
	From    int             `json:"from"`
	To      int             `json:"to"`
	Added   []string        `json:"added,omitempty"`   // section titles
	Removed []string        `json:"removed,omitempty"` // section titles
	Changed []SectionChange `json:"changed,omitempty"` // in both versions, text changed
	// ClaimsAdded and ClaimsDropped are cited sentences (as "sentence" with
	// their markers) that appear only in the new or only in the old version.
	ClaimsAdded   []string `json:"claims_added,omitempty"`
	ClaimsDropped []string `json:"claims_dropped,omitempty"`
	// Addressed are the critique items the writer says this revision
	// addressed; Open are the others.
	Addressed []RevisionItem `json:"addressed,omitempty"`
	Open      []RevisionItem `json:"open,omitempty"`
	// UnsupportedFixed and UnsupportedLeft count the previous version's
	// unsupported claims that are gone (dropped or now verified) and that
	// are still unsupported, as checked by code.
	UnsupportedFixed int `json:"unsupported_fixed,omitempty"`
	UnsupportedLeft  int `json:"unsupported_left,omitempty"`
}

// SectionChange is a section present in both versions whose text changed.
type SectionChange struct {
	Title string `json:"title"`
	// Share is the share of words changed (word edit distance over the
	// longer text's words), 0..1.
	Share     float64 `json:"share"`
	Rewritten bool    `json:"rewritten"` // Share ≥ 0.5
}

// RevisionItem is one numbered critique item a revision is asked to address:
// a reviewer's issue, or a person's requested changes.
type RevisionItem struct {
	N        int    `json:"n"`
	By       string `json:"by"` // "reviewer" or who asked
	Severity string `json:"severity,omitempty"`
	Category string `json:"category,omitempty"`
	Location string `json:"location,omitempty"`
	Text     string `json:"text"`
	Fix      string `json:"fix,omitempty"`
}

// severityRank orders severities, most serious first.
var severityRank = map[string]int{severityCritical: 0, severityMajor: 1, severityMinor: 2, severitySuggestion: 3}

// numberedItems numbers a critique's items from first: a person's critique
// is one item, a reviewer's issues are ordered most serious first.
func numberedItems(c Critique, first int) []RevisionItem {
	if c.Human != "" {
		return []RevisionItem{{N: first, By: nonBlank(c.By, "a person"), Text: strings.TrimSpace(c.Human)}}
	}
	items := append([]CritiqueItem(nil), c.Items...)
	sort.SliceStable(items, func(a, b int) bool {
		return rankOf(items[a].Severity) < rankOf(items[b].Severity)
	})
	out := make([]RevisionItem, 0, len(items))
	for i, it := range items {
		out = append(out, RevisionItem{
			N: first + i, By: "reviewer", Severity: strings.ToLower(it.Severity), Category: it.Category,
			Location: it.Location, Text: strings.TrimSpace(it.Description), Fix: strings.TrimSpace(it.SuggestedFix),
		})
	}
	return out
}

func rankOf(sev string) int {
	if r, ok := severityRank[strings.ToLower(strings.TrimSpace(sev))]; ok {
		return r
	}
	return len(severityRank)
}

// revisionItems numbers, from 1, every critique item of draft version v: the
// list a revision of v is asked to address, in the order the writer sees it.
func revisionItems(r *Run, v int) []RevisionItem {
	var out []RevisionItem
	for _, c := range r.Critiques {
		if c.DraftVersion == v {
			out = append(out, numberedItems(c, len(out)+1)...)
		}
	}
	return out
}

// DiffDrafts compares a revision with the version before it. items are the
// critique items the revision was asked to address and addressed the numbers
// the writer says it addressed. Sections are matched by title (case and
// spacing ignored); the abstract and conclusion count as sections. It is pure.
func DiffDrafts(prev, next Draft, items []RevisionItem, addressed []int) DraftDiff {
	diff := DraftDiff{From: prev.Version, To: next.Version}
	before := titledTexts(prev)
	after := titledTexts(next)
	seen := map[string]bool{}
	for _, a := range after {
		k := titleKey(a.title)
		seen[k] = true
		b, ok := findTitled(before, k)
		if !ok {
			diff.Added = append(diff.Added, a.title)
			continue
		}
		if share := textmatch.ChangedShare(b.text, a.text); share > 0 {
			diff.Changed = append(diff.Changed, SectionChange{Title: a.title, Share: share, Rewritten: share >= rewrittenShare})
		}
	}
	for _, b := range before {
		if !seen[titleKey(b.title)] {
			diff.Removed = append(diff.Removed, b.title)
		}
	}

	oldClaims, newClaims := claimSentences(prev.Claims), claimSentences(next.Claims)
	for _, k := range newClaims.order {
		if _, ok := oldClaims.text[k]; !ok {
			diff.ClaimsAdded = append(diff.ClaimsAdded, newClaims.text[k])
		}
	}
	for _, k := range oldClaims.order {
		if _, ok := newClaims.text[k]; !ok {
			diff.ClaimsDropped = append(diff.ClaimsDropped, oldClaims.text[k])
		}
	}
	stillBad := map[string]bool{}
	for _, c := range Unsupported(next.Claims) {
		stillBad[claimKey(c)] = true
	}
	for _, c := range Unsupported(prev.Claims) {
		if stillBad[claimKey(c)] {
			diff.UnsupportedLeft++
		} else {
			diff.UnsupportedFixed++
		}
	}

	done := map[int]bool{}
	for _, n := range addressed {
		done[n] = true
	}
	for _, it := range items {
		if done[it.N] {
			diff.Addressed = append(diff.Addressed, it)
		} else {
			diff.Open = append(diff.Open, it)
		}
	}
	return diff
}

// Summary is the diff in one line, for people: sections added, removed,
// rewritten and edited, claims added and dropped, unsupported claims fixed,
// and how many critique items were addressed.
func (d DraftDiff) Summary() string {
	var parts []string
	var rewritten, edited []string
	for _, c := range d.Changed {
		if c.Rewritten {
			rewritten = append(rewritten, fmt.Sprintf("%s (%.0f%% of words)", c.Title, 100*c.Share))
		} else {
			edited = append(edited, c.Title)
		}
	}
	for _, p := range []struct {
		verb   string
		titles []string
	}{{"rewrote", rewritten}, {"edited", edited}, {"added", d.Added}, {"removed", d.Removed}} {
		if len(p.titles) > 0 {
			parts = append(parts, p.verb+" "+strings.Join(p.titles, ", "))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "no section changed")
	}
	if len(d.ClaimsAdded)+len(d.ClaimsDropped) > 0 {
		parts = append(parts, fmt.Sprintf("claims %d added, %d dropped", len(d.ClaimsAdded), len(d.ClaimsDropped)))
	}
	if n := d.UnsupportedFixed + d.UnsupportedLeft; n > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d unsupported claims fixed or dropped", d.UnsupportedFixed, n))
	}
	if n := len(d.Addressed) + len(d.Open); n > 0 {
		parts = append(parts, fmt.Sprintf("addressed %d of %d critique items", len(d.Addressed), n))
	}
	return strings.Join(parts, " · ")
}

// titledText is one titled text of a draft.
type titledText struct{ title, text string }

func titledTexts(d Draft) []titledText {
	out := []titledText{{"Abstract", d.Abstract}}
	for i, s := range d.Sections {
		out = append(out, titledText{flatLine(nonBlank(s.Title, fmt.Sprintf("Section %d", i+1))), s.Content})
	}
	return append(out, titledText{"Conclusion", d.Conclusion})
}

func titleKey(t string) string { return strings.ToLower(flatLine(t)) }

func findTitled(ts []titledText, key string) (titledText, bool) {
	for _, t := range ts {
		if titleKey(t.title) == key {
			return t, true
		}
	}
	return titledText{}, false
}

// claimSet is a draft's cited sentences, keyed by their normalised words.
type claimSet struct {
	order []string
	text  map[string]string
}

func claimSentences(cs []Claim) claimSet {
	s := claimSet{text: map[string]string{}}
	for _, c := range cs {
		k := sentenceKey(c.Sentence)
		if _, ok := s.text[k]; ok {
			continue
		}
		s.order = append(s.order, k)
		s.text[k] = flatLine(c.Sentence)
	}
	return s
}

// sentenceKey identifies a sentence by its normalised words, markers aside.
func sentenceKey(s string) string { return textmatch.Key(stripMarkers(s)) }

// claimKey identifies a claim: its sentence and its source.
func claimKey(c Claim) string { return fmt.Sprintf("%s|%d", sentenceKey(c.Sentence), c.SourceID) }
