package extract

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
)

// monoFont is a font whose glyphs are all 600/1000 em wide, so a test's
// positions are exact: at 10 pt a glyph advances 6 pt.
var monoFont = "<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 126 /Widths [" +
	strings.Repeat("600 ", 126-32+1) + "] >>"

// TestPDFWordsByPosition checks the rule that places spaces and newlines
// by the glyphs' positions, on the ways producers separate words without
// drawing a space.
func TestPDFWordsByPosition(t *testing.T) {
	for _, c := range []struct {
		name, ops, want string
	}{
		{"TJ offsets (pdfTeX's word gaps)", "[(The)-333(default)-333(weight)] TJ", "The default weight"},
		{"kerns are not gaps", "[(W)80(ord)-50(s)] TJ", "Words"},
		{"a move along the line past the word's end", "(Two) Tj 22 0 Td (parts) Tj", "Two parts"},
		{"a move to the word's end", "(con) Tj 18 0 Td (tinued) Tj", "continued"},
		{"a new line", "(first) Tj 0 -12 Td (second) Tj", "first\nsecond"},
		{"a hyphenated line end joined", "(configura-) Tj 0 -12 Td (tion files) Tj", "configuration files"},
		{"a hyphen before a capital kept", "(Rhine-) Tj 0 -12 Td (Westphalia) Tj", "Rhine-\nWestphalia"},
		{"space glyphs are not doubled", "(a b ) Tj 30 0 Td (c) Tj", "a b c"},
		{"word spacing widens a space glyph only", "4 Tw (a b) Tj", "a b"},
		{"a superscript stays on its line", "(x) Tj 3 Ts (2) Tj 0 Ts ( + y) Tj", "x2 + y"},
		{"a font scaled by the text matrix", "/F1 1 Tf 10 0 0 10 72 600 Tm [(big)-400(gap)] TJ 0 -1.2 Td (next) Tj", "big gap\nnext"},
		{"a font scaled by the CTM", "ET q 2 0 0 2 0 0 cm BT /F1 5 Tf 36 300 Td [(scaled)-400(words)] TJ ET Q BT", "scaled words"},
		{"character spacing is not a gap", "3 Tc (spaced) Tj", "spaced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := buildPDF(pdfSpec{font: monoFont, pages: []string{"BT /F1 10 Tf 72 700 Td " + c.ops + " ET\n"}})
			d, err := PDF(context.Background(), body, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Text != c.want {
				t.Errorf("text = %q, want %q", d.Text, c.want)
			}
		})
	}
}

// TestPDFWordsSeparated reads a real pdfTeX PDF (the fontconfig user
// manual from Debian; see testdata/SOURCES.md): pdfTeX draws no space
// glyphs, so before words were placed by position it read as
// "Fontconfigisalibrarydesignedto…". Its words must match pdftotext's.
func TestPDFWordsSeparated(t *testing.T) {
	body, err := os.ReadFile("testdata/fontconfig-user.pdf")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := os.ReadFile("testdata/fontconfig-user.pdftotext.txt")
	if err != nil {
		t.Fatal(err)
	}
	d, err := PDF(context.Background(), body, Limits{MaxRunes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if d.PageCount != 15 || len(d.PageStarts) != 15 || d.Truncated {
		t.Errorf("PageCount %d, %d page starts, truncated %v", d.PageCount, len(d.PageStarts), d.Truncated)
	}
	text := strings.Join(strings.Fields(d.Text), " ")
	for _, sentence := range []string{
		// ligatures (ﬁ) spelled out, "cus-/tomization" joined
		"Fontconfig is a library designed to provide system-wide font configuration, customization and application access.",
		"The intent is to make font configurations relatively static, and shared by as many applications as possible.",
	} {
		if !strings.Contains(text, sentence) {
			t.Errorf("%q not found in the text", sentence)
		}
	}
	if p := d.PageAt(strings.Index(d.Text, "Font Properties")); p != 1 {
		t.Errorf(`"Font Properties" on page %d, want 1`, p)
	}
	tp, nc, nr := overlap(d.Text, string(ref))
	if got := f1(tp, nc, nr); got < 0.95 {
		t.Errorf("word F1 against pdftotext = %.3f, want ≥ 0.95 (%d of %d words, reference %d)", got, tp, nc, nr)
	}
}

// TestPDFLayoutStateBounded checks that what the positioning keeps per
// page does not grow with the operators a hostile stream repeats: a
// million-deep q nesting and a new font name per Tf cost what the same
// number of no-op operators cost.
func TestPDFLayoutStateBounded(t *testing.T) {
	const n = 100_000
	var baseline, deep, names strings.Builder
	for i := range n {
		baseline.WriteString("n\n")
		deep.WriteString("q\n")
		fmt.Fprintf(&names, "/G%d 10 Tf\n", i)
	}
	var sameFont strings.Builder
	for range n {
		sameFont.WriteString("/F1 10 Tf\n")
	}
	allocated := func(ops string) uint64 {
		body := buildPDF(pdfSpec{font: monoFont, pages: []string{"BT /F1 10 Tf 72 700 Td (deep) Tj ET\n" + ops}})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d, err := PDF(context.Background(), body, Limits{})
		runtime.ReadMemStats(&after)
		if err != nil || d.Text != "deep" {
			t.Fatalf("text %q, %v", d.Text, err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	const slack = 4 << 20
	if b, q := allocated(baseline.String()), allocated(deep.String()); q > b+slack {
		t.Errorf("%d nested q allocated %d MB, %d no-ops %d MB", n, q>>20, n, b>>20)
	}
	if b, f := allocated("BT "+sameFont.String()+"ET\n"), allocated("BT "+names.String()+"ET\n"); f > b+slack {
		t.Errorf("%d unknown font names allocated %d MB, the same font %d MB", n, f>>20, b>>20)
	}
}
