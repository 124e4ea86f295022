package textmatch

import (
	"strings"
	"testing"
)

func texts(ws []Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Text
	}
	return out
}

func TestWordsNormaliseCaseAccentsPunctuationAndNumbers(t *testing.T) {
	got := Key("Café COP: 2.8 — costs 8,000 EUR; don't “heat-pump”\tﬁeld Straße")
	want := "cafe cop 28 costs 8000 eur dont heat pump field strasse"
	if got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	text := "Seasonal COP, 2.8!"
	ws := Words(text)
	if text[ws[2].Start:ws[2].End] != "2.8" {
		t.Errorf("offsets point at %q, want the original 2.8", text[ws[2].Start:ws[2].End])
	}
}

func TestLocateFindsExactFuzzyAndAbsentPassages(t *testing.T) {
	page := Words("Field trials in Canada measured a seasonal coefficient of performance of 2.8 at an average of minus 8 degrees.")
	cases := []struct {
		quote string
		want  float64
	}{
		{"measured a seasonal coefficient of performance of 2.8", 1},
		{"MEASURED a Seasonal coefficient-of-performance of 2.8!", 1},                 // case and punctuation
		{"trials in Canada measured a yearly coefficient of performance of 2.8", 0.9}, // one word of ten substituted
		{"trials in Canada measured a coefficient of performance of 2.8", 0.89},       // a word of the page left out
		{"heat pumps cut every heating bill by ninety percent", 0},
		{"", 0},
	}
	for _, c := range cases {
		sim, from, to := Locate(Words(c.quote), page)
		if sim < c.want-0.01 || sim > c.want+0.01 {
			t.Errorf("Locate(%q) = %.2f, want %.2f", c.quote, sim, c.want)
		}
		if c.want == 1 && to-from < len(Words(c.quote)) {
			t.Errorf("Locate(%q) matched only %d words", c.quote, to-from)
		}
	}
	// A substituted last word stays part of the passage.
	sim, from, to := Locate(Words("of minus 8 kelvin"), page)
	if sim != 0.75 || strings.Join(texts(page[from:to]), " ") != "of minus 8 degrees" {
		t.Errorf("passage %v (%.2f), want it to end at degrees", texts(page[from:to]), sim)
	}
}

func TestChangedShare(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"Heat pumps work.", "heat  pumps WORK", 0},
		{"one two three four", "one two three five", 0.25},
		{"one two", "three four five six", 1},
		{"", "", 0},
	} {
		if got := ChangedShare(c.a, c.b); got != c.want {
			t.Errorf("ChangedShare(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// FuzzWords checks that word offsets point into the text, in order, and
// that any run of a text's words is found in it exactly.
func FuzzWords(f *testing.F) {
	f.Add("Field trials measured a COP of 2.8 at −8 °C; don't.")
	f.Add("ﬁ Straße 8,000\u202f000 l'été")
	f.Fuzz(func(t *testing.T, text string) {
		ws := Words(text)
		last := 0
		for _, w := range ws {
			if w.Start < last || w.End <= w.Start || w.End > len(text) {
				t.Fatalf("word %+v out of place in %q", w, text)
			}
			last = w.End
		}
		if len(ws) >= 3 {
			if sim, _, _ := Locate(ws[1:len(ws)-1], ws); sim != 1 {
				t.Fatalf("inner words of %q found at %.2f", text, sim)
			}
		}
	})
}
