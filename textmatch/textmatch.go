// Package textmatch compares texts as sequences of normalised words: it
// finds where a quote occurs in a page, allowing a few words to differ, and
// measures how much a text changed. Case, accents, compatibility forms,
// punctuation and spacing are ignored, so a quote copied by a model matches
// the page it came from even when its typography differs.
package textmatch

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Word is one normalised word and where it sits in the original text.
type Word struct {
	Text       string // normalised
	Start, End int    // byte offsets in the original text
}

// Words splits text into normalised words: runs of letters and digits,
// case-folded, with accents removed and compatibility forms unified (NFKD,
// so "ﬁ" reads as "fi"). A period, comma or thin space between two digits
// ("8,000", "2.8") and an apostrophe between two letters ("don't") do not
// split a word; every other character does ("heat-pump" is two words).
func Words(text string) []Word {
	var out []Word
	fold := newFolder()
	start := -1
	var raw strings.Builder
	prev := rune(0)
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		next, _ := utf8.DecodeRuneInString(text[i+size:])
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if start < 0 {
				start = i
			}
			raw.WriteRune(r)
		case start >= 0 && joinsWord(prev, r, next):
			// the word goes on, without the separator
		default:
			if start >= 0 {
				out = append(out, Word{Text: fold(raw.String()), Start: start, End: i})
				raw.Reset()
				start = -1
			}
		}
		prev = r
		i += size
	}
	if start >= 0 {
		out = append(out, Word{Text: fold(raw.String()), Start: start, End: len(text)})
	}
	return out
}

// Key is the normalised words of text joined by spaces: two texts with the
// same Key read the same.
func Key(text string) string {
	ws := Words(text)
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Text
	}
	return strings.Join(parts, " ")
}

// joinsWord reports whether sep between prev and next belongs inside a word.
func joinsWord(prev, sep, next rune) bool {
	switch sep {
	case '.', ',', '\u2009', '\u202f': // decimal points, thousands separators
		return unicode.IsDigit(prev) && unicode.IsDigit(next)
	case '\'', '’':
		return unicode.IsLetter(prev) && unicode.IsLetter(next)
	}
	return false
}

// newFolder returns a function that folds one word for comparison: NFKD,
// combining marks removed, case folded. It is not safe for concurrent use.
func newFolder() func(string) string {
	t := transform.Chain(norm.NFKD, runes.Remove(runes.In(unicode.Mn)), cases.Fold())
	return func(w string) string {
		if isASCII(w) {
			return strings.ToLower(w)
		}
		out, _, err := transform.String(t, w)
		if err != nil {
			return strings.ToLower(w)
		}
		return out
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Locate finds the passage of text that pattern matches best, allowing word
// insertions, deletions and substitutions: the edit distance with a free
// start and end in text (Sellers' algorithm, "The theory and computation of
// evolutionary distances: pattern recognition", J. Algorithms 1980), in
// O(len(pattern)·len(text)) time and O(len(text)) memory. It returns the
// similarity 1 − d/len(pattern) (0 for an empty pattern) and the matched
// words text[from:to]; among equally good passages it takes the longest (a
// substituted word at either end is part of the passage), then the first.
func Locate(pattern, text []Word) (sim float64, from, to int) {
	m, n := len(pattern), len(text)
	if m == 0 {
		return 0, 0, 0
	}
	prev, cur := make([]int, n+1), make([]int, n+1)
	prevStart, curStart := make([]int, n+1), make([]int, n+1)
	for j := range prev {
		prevStart[j] = j // a match may start anywhere in text, for free
	}
	for i := 1; i <= m; i++ {
		cur[0], curStart[0] = i, 0
		for j := 1; j <= n; j++ {
			best, start := prev[j-1], prevStart[j-1]
			if pattern[i-1].Text != text[j-1].Text {
				best++
			}
			if d := prev[j] + 1; d < best { // a pattern word missing from text
				best, start = d, prevStart[j]
			}
			if d := cur[j-1] + 1; d < best { // an extra word in text
				best, start = d, curStart[j-1]
			}
			cur[j], curStart[j] = best, start
		}
		prev, cur = cur, prev
		prevStart, curStart = curStart, prevStart
	}
	bestJ := 0
	for j := 1; j <= n; j++ {
		d, bd := prev[j], prev[bestJ]
		if d < bd || (d == bd && j-prevStart[j] > bestJ-prevStart[bestJ]) {
			bestJ = j
		}
	}
	return 1 - float64(prev[bestJ])/float64(m), prevStart[bestJ], bestJ
}

// ChangedShare is the share of words changed between a and b: the word edit
// distance (Levenshtein) over the number of words of the longer text; 0 when
// they read the same, 1 when they have nothing in common.
func ChangedShare(a, b string) float64 {
	wa, wb := Words(a), Words(b)
	n := max(len(wa), len(wb))
	if n == 0 {
		return 0
	}
	return float64(distance(wa, wb)) / float64(n)
}

// distance is the Levenshtein distance between two word sequences.
func distance(a, b []Word) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1].Text != b[j-1].Text {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
