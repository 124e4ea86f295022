package pipeline

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/researchbot/researchbot/textmatch"
)

// Claim-level evidence. The writer returns, with its draft, a quote from the
// cited source for every cited sentence; code checks each quote against the
// text the run fetched for that source. Verification is code: it adds no
// model call.

// Verification thresholds.
const (
	// QuoteMatchThreshold is the lowest similarity at which a quote counts
	// as found in its source. Similarity is 1 − d/n, where n is the number
	// of words in the quote and d the fewest word insertions, deletions and
	// substitutions that turn the quote into some passage of the source
	// (approximate substring matching, Sellers 1980), after both are
	// normalised: case, accents, punctuation and whitespace are ignored, and
	// "8,000" reads as "8000". At 0.85 a 20-word quote may differ from the
	// source in 3 words.
	QuoteMatchThreshold = 0.85
	// MinQuoteWords is the shortest quote that is checked; a shorter one
	// would be found almost anywhere.
	MinQuoteWords = 5
	// sentenceMatchThreshold is how close the writer's copy of a sentence
	// must be to a cited sentence of the draft for its quote to be paired
	// with that sentence.
	sentenceMatchThreshold = 0.6
	// foundPassageChars bounds the source passage kept with a claim.
	foundPassageChars = 400
)

// Claim statuses.
const (
	ClaimVerified    = "verified"
	ClaimUnsupported = "unsupported"
)

// Parts of a draft a claim can sit in, besides its sections (0, 1, …).
const (
	PartAbstract   = -1
	PartConclusion = -2
)

// Claim is one cited sentence of a draft and one source it cites, with the
// writer's supporting quote and what code found when it checked the quote.
type Claim struct {
	// Part is where the sentence is: a section index, PartAbstract or
	// PartConclusion; Location names it for people.
	Part     int    `json:"part"`
	Location string `json:"location"`
	// Sentence is the sentence exactly as written, citation markers included.
	Sentence string `json:"sentence"`
	SourceID int    `json:"source_id"`
	// Ref is the source's reference number in a report (0 in a draft).
	Ref int `json:"ref,omitempty"`
	// Quote is the writer's quote, as given.
	Quote string `json:"quote,omitempty"`
	// Found is the passage of the source that matches the quote best;
	// Page is the page of a PDF on which it starts (0 for a web page).
	Found  string  `json:"found,omitempty"`
	Page   int     `json:"page,omitempty"`
	Match  float64 `json:"match"` // similarity of Quote to Found, 0..1
	Status string  `json:"status"`
	// Reason says why an unsupported claim is unsupported.
	Reason string `json:"reason,omitempty"`
}

// Cite is the claim's citation in a report: "[3]", or "[3, p. 7]" when
// the quote was found on page 7 of a PDF.
func (c Claim) Cite() string {
	if c.Page > 0 {
		return fmt.Sprintf("[%d, p. %d]", c.Ref, c.Page)
	}
	return fmt.Sprintf("[%d]", c.Ref)
}

// ClaimTally counts claims by status.
type ClaimTally struct {
	Total       int `json:"total"`
	Verified    int `json:"verified"`
	Unsupported int `json:"unsupported"`
}

// String is the tally for people: "14 claims · 12 verified · 2 unsupported".
func (t ClaimTally) String() string {
	return fmt.Sprintf("%d claims · %d verified · %d unsupported", t.Total, t.Verified, t.Unsupported)
}

// TallyClaims counts claims by status.
func TallyClaims(cs []Claim) ClaimTally {
	t := ClaimTally{Total: len(cs)}
	for _, c := range cs {
		if c.Status == ClaimVerified {
			t.Verified++
		} else {
			t.Unsupported++
		}
	}
	return t
}

// Unsupported returns the claims that are not verified, in order.
func Unsupported(cs []Claim) []Claim {
	var out []Claim
	for _, c := range cs {
		if c.Status != ClaimVerified {
			out = append(out, c)
		}
	}
	return out
}

// maxListedClaims bounds the unsupported claims a checkpoint lists.
const maxListedClaims = 10

// claimSummary is the draft review's view of d's claims.
func claimSummary(d Draft, pages []Page) ClaimSummary {
	s := ClaimSummary{Checked: d.ClaimsChecked, ClaimTally: TallyClaims(d.Claims)}
	view := func(c Claim) ClaimView {
		return ClaimView{
			Location: c.Location, Sentence: flatLine(c.Sentence), SourceID: c.SourceID,
			Source: sourceRef(c.SourceID, pages).Title, Quote: flatLine(c.Quote), Reason: c.Reason,
		}
	}
	for _, g := range groupBySentence(Unsupported(d.Claims)) {
		if len(s.Unsupported) == maxListedClaims {
			break
		}
		v := view(g[0])
		for _, c := range g[1:] {
			v.Also = append(v.Also, view(c))
		}
		s.Unsupported = append(s.Unsupported, v)
	}
	return s
}

// sourceRef names a page the run read, by source id.
func sourceRef(id int, pages []Page) SourceRef {
	for _, p := range pages {
		if p.SourceID == id {
			u := pageAddress(p)
			return SourceRef{ID: id, Title: flatLine(nonBlank(p.Title, hostDomain(u))), Domain: hostDomain(u)}
		}
	}
	return SourceRef{ID: id, Title: fmt.Sprintf("source %d", id)}
}

// citedSentence is a sentence of a draft that cites at least one fetched page.
type citedSentence struct {
	part     int
	location string
	text     string
	ids      []int
	words    []textmatch.Word
}

// draftPart is one text of a draft with where it sits.
type draftPart struct {
	part     int
	location string
	text     string
}

// draftParts lists the texts of d that may cite: abstract, sections, conclusion.
func draftParts(d Draft) []draftPart {
	parts := []draftPart{{PartAbstract, "Abstract", d.Abstract}}
	for i, s := range d.Sections {
		parts = append(parts, draftPart{i, flatLine(nonBlank(s.Title, fmt.Sprintf("Section %d", i+1))), s.Content})
	}
	return append(parts, draftPart{PartConclusion, "Conclusion", d.Conclusion})
}

// citedSentences returns the sentences of d whose citation markers name a
// fetched page, with those ids.
func citedSentences(d Draft, fetched map[int]bool) []citedSentence {
	var out []citedSentence
	for _, p := range draftParts(d) {
		for _, sp := range sentenceSpans(p.text) {
			text := strings.TrimSpace(p.text[sp[0]:sp[1]])
			var ids []int
			for _, id := range markerIDs(text) {
				if fetched[id] {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				continue
			}
			out = append(out, citedSentence{part: p.part, location: p.location, text: text, ids: ids, words: textmatch.Words(stripMarkers(text))})
		}
	}
	return out
}

// VerifyClaims pairs the writer's quotes with the cited sentences of d and
// checks each quote against the fetched text of the source it names. Every
// pair of a cited sentence and a source it cites is one Claim, in the order
// of the draft: verified when a quote for it is found in that source at
// QuoteMatchThreshold or better; otherwise unsupported, with the reason (no
// quote given, too short to check, found in another source, or not found).
// A quote whose sentence is not in d, or that names a source its sentence
// does not cite, is ignored. d should have been through CheckCitations. It
// is pure.
func VerifyClaims(d Draft, given []ClaimOutput, pages []Page) []Claim {
	texts := map[int]string{}
	byID := map[int]Page{}
	for _, p := range pages {
		if _, dup := texts[p.SourceID]; !dup {
			texts[p.SourceID] = p.Text
			byID[p.SourceID] = p
		}
	}
	fetched := map[int]bool{}
	for id := range texts {
		fetched[id] = true
	}
	sentences := citedSentences(d, fetched)

	// Pair each quote with the cited sentence it belongs to.
	type key struct{ sentence, id int }
	quotes := map[key][]string{}
	for _, g := range given {
		gw := textmatch.Words(stripMarkers(g.Sentence))
		if len(gw) == 0 || strings.TrimSpace(g.Quote) == "" {
			continue
		}
		best, bestScore := -1, sentenceMatchThreshold
		for i, s := range sentences {
			if !slices.Contains(s.ids, g.SourceID) {
				continue
			}
			score, _, _ := textmatch.Locate(gw, s.words)
			if back, _, _ := textmatch.Locate(s.words, gw); back > score {
				score = back
			}
			if score >= bestScore && (best < 0 || score > bestScore) {
				best, bestScore = i, score
			}
		}
		if best >= 0 {
			k := key{best, g.SourceID}
			quotes[k] = append(quotes[k], g.Quote)
		}
	}

	index := newPageIndex(texts, byID)
	var claims []Claim
	for i, s := range sentences {
		for _, id := range s.ids {
			c := Claim{Part: s.part, Location: s.location, Sentence: s.text, SourceID: id, Status: ClaimUnsupported}
			qs := quotes[key{i, id}]
			if len(qs) == 0 {
				c.Reason = "no supporting quote was given"
			}
			for _, q := range qs {
				checkQuote(&c, q, id, index)
				if c.Status == ClaimVerified {
					break
				}
			}
			claims = append(claims, c)
		}
	}
	return claims
}

// checkQuote verifies quote q for source id and records the result in c when
// it is better than what c holds.
func checkQuote(c *Claim, q string, id int, index *pageIndex) {
	qw := textmatch.Words(stripMarkers(q))
	if len(qw) < MinQuoteWords {
		if c.Quote == "" {
			c.Quote = strings.TrimSpace(q)
			c.Reason = fmt.Sprintf("the quote is too short to check (fewer than %d words)", MinQuoteWords)
		}
		return
	}
	sim, found, page := index.find(id, qw)
	if c.Quote != "" && sim <= c.Match {
		return
	}
	c.Quote, c.Match, c.Found, c.Page = strings.TrimSpace(q), sim, found, page
	if sim >= QuoteMatchThreshold {
		c.Status, c.Reason = ClaimVerified, ""
		return
	}
	c.Reason = "the quote was not found in the cited source (none of its words match)"
	if sim > 0 {
		c.Reason = fmt.Sprintf("the quote was not found in the cited source (at best %.0f%% of its words match)", 100*sim)
	}
	if other, ok := index.elsewhere(id, qw); ok {
		c.Reason = fmt.Sprintf("the quote is from another source the run read (source %d), not the cited one", other)
	}
}

// pageIndex holds the pages' normalised words, computed once per page.
type pageIndex struct {
	texts map[int]string
	pages map[int]Page
	words map[int][]textmatch.Word
}

func newPageIndex(texts map[int]string, pages map[int]Page) *pageIndex {
	return &pageIndex{texts: texts, pages: pages, words: map[int][]textmatch.Word{}}
}

func (x *pageIndex) wordsOf(id int) []textmatch.Word {
	w, ok := x.words[id]
	if !ok {
		w = textmatch.Words(x.texts[id])
		x.words[id] = w
	}
	return w
}

// find returns how well qw occurs in source id, the matching passage and,
// for a PDF, the page on which the passage starts.
func (x *pageIndex) find(id int, qw []textmatch.Word) (float64, string, int) {
	pw := x.wordsOf(id)
	sim, from, to := textmatch.Locate(qw, pw)
	if to <= from {
		return sim, "", 0
	}
	text := x.texts[id]
	return sim, clipText(flatLine(text[pw[from].Start:pw[to-1].End]), foundPassageChars), x.pages[id].pageAt(pw[from].Start)
}

// elsewhere reports another page in which qw is found.
func (x *pageIndex) elsewhere(id int, qw []textmatch.Word) (int, bool) {
	var ids []int
	for other := range x.texts {
		if other != id {
			ids = append(ids, other)
		}
	}
	slices.Sort(ids)
	for _, other := range ids {
		if sim, _, _ := textmatch.Locate(qw, x.wordsOf(other)); sim >= QuoteMatchThreshold {
			return other, true
		}
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// Sentences.

// markerPattern matches one citation marker such as [3] or [1, 4].
const markerPattern = `\[\s*\d{1,6}\s*(?:[,;\-–—]\s*\d{1,6}\s*)*\]`

// markerRE and leadingMarkersRE (markers opening a text, with their
// punctuation) are compiled once.
var (
	markerRE         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(markerPattern) })
	leadingMarkersRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:` + markerPattern + `\s*)+[.,;:]?`) })
)

// stripMarkers removes citation markers from text.
func stripMarkers(text string) string {
	return markerRE().ReplaceAllString(text, " ")
}

// abbreviations end with a period that does not end a sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "al": true, "vs": true, "fig": true, "no": true, "dr": true, "mr": true,
	"mrs": true, "ms": true, "st": true, "approx": true, "ca": true, "cf": true, "eq": true, "vol": true, "pp": true,
	"u.s": true, "u.k": true, "e.u": true,
}

// sentenceSpans splits text into sentences, as byte ranges: at line breaks,
// and after ".", "!" or "?" (and any closing quotes or brackets) followed by
// whitespace, unless the period ends a common abbreviation or an initial. A
// citation marker that follows a sentence's end ("… claim. [3]") stays with
// that sentence. Blank ranges are left out.
func sentenceSpans(text string) [][2]int {
	var spans [][2]int
	start := 0
	add := func(end int) {
		if strings.TrimSpace(text[start:end]) != "" {
			spans = append(spans, [2]int{start, end})
		}
		start = end
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\n' {
			add(i + 1)
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(text) && strings.IndexByte(`"')]*_`, text[j]) >= 0 {
			j++
		}
		if j < len(text) && text[j] != ' ' && text[j] != '\t' && text[j] != '\n' {
			continue
		}
		if c == '.' && isAbbreviation(text[start:i]) {
			continue
		}
		add(j)
	}
	add(len(text))
	return attachLeadingMarkers(text, spans)
}

// isAbbreviation reports whether before (the sentence so far) ends in an
// abbreviation or a single-letter initial.
func isAbbreviation(before string) bool {
	k := len(before)
	for k > 0 && (isWordByte(before[k-1]) || before[k-1] == '.') {
		k--
	}
	w := strings.ToLower(before[k:])
	if w == "" {
		return false
	}
	return abbreviations[w] || (len(w) == 1 && w[0] >= 'a' && w[0] <= 'z' && strings.ToUpper(before[k:]) == before[k:])
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// attachLeadingMarkers moves citation markers at the start of a sentence to
// the end of the sentence before it.
func attachLeadingMarkers(text string, spans [][2]int) [][2]int {
	lead := leadingMarkersRE()
	var out [][2]int
	for _, sp := range spans {
		if len(out) > 0 && !strings.HasSuffix(text[out[len(out)-1][0]:out[len(out)-1][1]], "\n") {
			if m := lead.FindStringIndex(text[sp[0]:sp[1]]); m != nil {
				out[len(out)-1][1] = sp[0] + m[1]
				sp[0] += m[1]
			}
		}
		if strings.TrimSpace(text[sp[0]:sp[1]]) != "" {
			out = append(out, sp)
		}
	}
	return out
}
