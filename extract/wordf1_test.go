package extract

import (
	"strings"
	"unicode"
)

// Word-bag F1 against a reference text, the measure of PDF extraction
// (pdfbench_test.go, TestPDFWordsSeparated).

// words splits text into lower-case words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// overlap returns the size of the multiset intersection of the two texts'
// word bags and the size of each bag.
func overlap(cand, ref string) (tp, nc, nr int) {
	bag := map[string]int{}
	rw := words(ref)
	for _, w := range rw {
		bag[w]++
	}
	cw := words(cand)
	for _, w := range cw {
		if bag[w] > 0 {
			bag[w]--
			tp++
		}
	}
	return tp, len(cw), len(rw)
}

func f1(tp, nc, nr int) float64 {
	if tp == 0 {
		return 0
	}
	p, r := float64(tp)/float64(nc), float64(tp)/float64(nr)
	return 2 * p * r / (p + r)
}
