package extract

import (
	"cmp"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// This file turns a page's text-showing operators into text with word and
// line breaks where the glyphs' positions put them. Many producers (pdfTeX
// above all: most arXiv papers and TeX-made manuals) draw no space glyphs:
// a gap between words is only a positioning offset in a TJ array or a move
// of the text matrix. The library (github.com/ledongthuc/pdf) still lexes
// the content stream (pdf.Interpret) and decodes the fonts (encodings,
// ToUnicode maps, Widths); what is added here is the PDF text-positioning
// model (PDF 32000-1:2008 §9.4): where each glyph starts and where the
// previous one ended, so that a gap wider than wordGap of the font size
// becomes a space, and a move off the baseline becomes a newline, as
// poppler's pdftotext decides word boundaries.

// wordGap is the share of the font size above which the gap between two
// glyphs on a line is a word break: poppler's pdftotext uses the same
// (minWordBreakSpace). TeX's kerns stay below it and its narrowest word
// space (a thin space, a sixth of an em) above it; on the measured corpus
// 0.1 reads better than 0.15 (docs/performance.md#pdf-extraction).
const wordGap = 0.1

// lineShift is the share of the font size by which the next glyph must
// leave the previous glyph's baseline to start a new line (superscripts
// and subscripts move less).
const lineShift = 0.6

// affine is a PDF transformation matrix [a b c d e f].
type affine [6]float64

var identity = affine{1, 0, 0, 1, 0, 0}

// times returns m×n: m applied first, then n.
func (m affine) times(n affine) affine {
	return affine{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func translate(tx, ty float64) affine { return affine{1, 0, 0, 1, tx, ty} }

// textState is the part of the graphics state that q and Q save.
type textState struct {
	ctm                      affine
	font                     *layoutFont
	size, tc, tw, th, tl, ts float64
}

// layoutFont is what positioning needs of a font: how to split a string
// into codes, decode a code, and how far a code advances.
type layoutFont struct {
	enc       pdf.TextEncoding
	twoByte   bool      // a Type0 (composite) font: 2-byte codes
	first     int       // simple fonts: the code of widths[0]
	widths    []float64 // simple fonts: glyph widths in glyph space
	cidWidths map[int]float64
	cidRanges []cidRange
	defWidth  float64 // width of a code not listed
	scale     float64 // glyph space to text space (1/1000, or a Type3 FontMatrix)
}

type cidRange struct {
	lo, hi int
	w      float64
}

// maxWidthEntries bounds how many widths a font may list (a hostile W
// array could otherwise cost memory out of proportion to the file).
const maxWidthEntries = 1 << 16

func newLayoutFont(f pdf.Font) *layoutFont {
	lf := &layoutFont{enc: f.Encoder(), scale: 1.0 / 1000}
	if lf.enc == nil {
		lf.enc = nopEncoding{}
	}
	v := f.V
	switch v.Key("Subtype").Name() {
	case "Type0":
		lf.twoByte = true
		d := v.Key("DescendantFonts").Index(0)
		lf.defWidth = 1000
		if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
			lf.defWidth = dw.Float64()
		}
		lf.cidWidths = map[int]float64{}
		w := d.Key("W")
		for i := 0; i+1 < w.Len() && len(lf.cidWidths)+len(lf.cidRanges) < maxWidthEntries; {
			c := int(w.Index(i).Int64())
			if next := w.Index(i + 1); next.Kind() == pdf.Array {
				for j := 0; j < next.Len() && len(lf.cidWidths) < maxWidthEntries; j++ {
					lf.cidWidths[c+j] = next.Index(j).Float64()
				}
				i += 2
				continue
			}
			if i+2 >= w.Len() {
				break
			}
			lf.cidRanges = append(lf.cidRanges, cidRange{c, int(w.Index(i + 1).Int64()), w.Index(i + 2).Float64()})
			i += 3
		}
		return lf
	case "Type3":
		if m := v.Key("FontMatrix"); m.Len() == 6 {
			lf.scale = m.Index(0).Float64()
		}
	}
	ws := v.Key("Widths")
	lf.first = int(v.Key("FirstChar").Int64())
	for i := 0; i < ws.Len() && i < 256; i++ {
		lf.widths = append(lf.widths, ws.Index(i).Float64())
	}
	// Without Widths (the standard 14 fonts of old PDFs), half an em
	// is a glyph's typical width.
	lf.defWidth = 500
	if lf.scale != 1.0/1000 && lf.scale != 0 {
		lf.defWidth = 0.5 / lf.scale
	}
	if len(lf.widths) > 0 {
		lf.defWidth = 0 // listed widths are exact; a code outside them is rare
	}
	return lf
}

// width returns the advance of code in glyph space.
func (f *layoutFont) width(code int) float64 {
	if f.twoByte {
		if w, ok := f.cidWidths[code]; ok {
			return w
		}
		for _, r := range f.cidRanges {
			if r.lo <= code && code <= r.hi {
				return r.w
			}
		}
		return f.defWidth
	}
	if i := code - f.first; i >= 0 && i < len(f.widths) {
		return f.widths[i]
	}
	return f.defWidth
}

// unknownFont stands for a font the page does not define (or text shown
// before any Tf): bytes as they are, half an em wide.
var unknownFont = &layoutFont{enc: nopEncoding{}, defWidth: 500, scale: 1.0 / 1000}

// maxStateDepth bounds the q (save state) nesting kept: a stream of a
// million q operators must not cost a million saved states. Acrobat's own
// limit is 28; deeper saves are dropped and their Q restores an outer one.
const maxStateDepth = 256

// nopEncoding passes bytes through, for a font the page does not define.
type nopEncoding struct{}

func (nopEncoding) Decode(raw string) string { return raw }

// layoutWriter collects a page's glyphs into text.
type layoutWriter struct {
	b       []byte
	started bool
	// the end of the previous glyph in device space, its baseline's
	// direction and its font size
	endX, endY, dirX, dirY, size float64
}

// ligatures spells out the Latin ligature characters (U+FB00–FB06) that
// ToUnicode maps give for TeX's ﬁ, ﬂ, ﬀ, ﬃ and ﬄ glyphs, as pdftotext
// does: "ﬁle" is searched, quoted and counted as "file".
var ligatures = strings.NewReplacer("\uFB00", "ff", "\uFB01", "fi", "\uFB02", "fl", "\uFB03", "ffi", "\uFB04", "ffl", "\uFB05", "st", "\uFB06", "st")

// glyph writes s, drawn with its origin at (x, y), after a space or a
// newline if its position calls for one; (ex, ey) is where it ends.
func (w *layoutWriter) glyph(s string, x, y, ex, ey, dirX, dirY, size float64) {
	if s == "" {
		return
	}
	if w.started {
		dx, dy := x-w.endX, y-w.endY
		along := dx*w.dirX + dy*w.dirY
		across := -dx*w.dirY + dy*w.dirX
		ref := math.Max(w.size, size)
		switch {
		case math.Abs(across) > lineShift*ref || along < -2*ref:
			if !w.joinHyphenated(s) {
				w.sep('\n')
			}
		case along > wordGap*ref:
			w.sep(' ')
		}
	}
	w.b = append(w.b, s...)
	w.started = true
	w.endX, w.endY, w.dirX, w.dirY, w.size = ex, ey, dirX, dirY, size
}

// joinHyphenated removes the hyphen that ends the line when the word goes
// on at the start of the next line (next begins with a lower-case letter
// and the hyphen follows a letter), as pdftotext does, and reports whether
// it did: the word is then read, searched and quoted whole.
func (w *layoutWriter) joinHyphenated(next string) bool {
	r, _ := utf8.DecodeRuneInString(next)
	if !unicode.IsLower(r) {
		return false
	}
	hyphen, n := utf8.DecodeLastRune(w.b)
	if hyphen != '-' && hyphen != '\u00AD' && hyphen != '\u2010' {
		return false
	}
	if before, _ := utf8.DecodeLastRune(w.b[:len(w.b)-n]); !unicode.IsLetter(before) {
		return false
	}
	w.b = w.b[:len(w.b)-n]
	return true
}

// sep writes a space or newline unless the text already ends in white
// space (a producer that draws space glyphs also positions them).
func (w *layoutWriter) sep(r rune) {
	last, _ := utf8.DecodeLastRune(w.b)
	if !unicode.IsSpace(last) {
		w.b = utf8.AppendRune(w.b, r)
		return
	}
	if r == '\n' && last != '\n' {
		// a space glyph ended the line: the line break still counts
		w.b = append(w.b, '\n')
	}
}

// layoutText returns the text of page p in content-stream order, with
// spaces and newlines placed by the glyphs' positions (see wordGap and
// lineShift). The library's parse errors panic; the caller recovers.
func layoutText(p pdf.Page) string {
	strm := p.V.Key("Contents")
	if strm.IsNull() {
		return ""
	}
	fonts := map[string]*layoutFont{}
	var w layoutWriter
	g := textState{ctm: identity, th: 1}
	var stack []textState
	tm, tlm := identity, identity

	show := func(raw string) {
		f := g.font
		f = cmp.Or(f, unknownFont)
		step := 1
		if f.twoByte {
			step = 2
		}
		for i := 0; i+step <= len(raw); i += step {
			code := int(raw[i])
			if step == 2 {
				code = code<<8 | int(raw[i+1])
			}
			trm := affine{g.size * g.th, 0, 0, g.size, 0, g.ts}.times(tm).times(g.ctm)
			tx := (f.width(code)*f.scale*g.size + g.tc) * g.th
			if step == 1 && code == ' ' {
				tx += g.tw * g.th
			}
			next := translate(tx, 0).times(tm)
			end := affine{g.size * g.th, 0, 0, g.size, 0, g.ts}.times(next).times(g.ctm)
			dirX, dirY := trm[0], trm[1]
			if n := math.Hypot(dirX, dirY); n > 0 {
				dirX, dirY = dirX/n, dirY/n
			} else {
				dirX, dirY = 1, 0
			}
			size := math.Hypot(trm[2], trm[3])
			w.glyph(f.enc.Decode(raw[i:i+step]), trm[4], trm[5], end[4], end[5], dirX, dirY, size)
			tm = next
		}
	}
	nextLine := func(tx, ty float64) {
		tlm = translate(tx, ty).times(tlm)
		tm = tlm
	}
	num := func(args []pdf.Value, i int) float64 {
		if i < len(args) {
			return args[i].Float64()
		}
		return 0
	}
	matrixArgs := func(args []pdf.Value) (affine, bool) {
		if len(args) != 6 {
			return affine{}, false
		}
		var m affine
		for i := range m {
			m[i] = args[i].Float64()
		}
		return m, true
	}

	pdf.Interpret(strm, func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "q":
			if len(stack) < maxStateDepth {
				stack = append(stack, g)
			}
		case "Q":
			if n := len(stack); n > 0 {
				g, stack = stack[n-1], stack[:n-1]
			}
		case "cm":
			if m, ok := matrixArgs(args); ok {
				g.ctm = m.times(g.ctm)
			}
		case "BT":
			tm, tlm = identity, identity
		case "Tf":
			if len(args) != 2 {
				return
			}
			name := args[0].Name()
			f, ok := fonts[name]
			if !ok {
				font := p.Font(name)
				if font.V.IsNull() {
					// not one of the page's fonts: not cached, so a
					// stream naming a million fonts costs no memory
					f = unknownFont
				} else {
					f = newLayoutFont(font)
					fonts[name] = f
				}
			}
			g.font, g.size = f, args[1].Float64()
		case "Tc":
			g.tc = num(args, 0)
		case "Tw":
			g.tw = num(args, 0)
		case "Tz":
			g.th = num(args, 0) / 100
		case "TL":
			g.tl = num(args, 0)
		case "Ts":
			g.ts = num(args, 0)
		case "Td":
			nextLine(num(args, 0), num(args, 1))
		case "TD":
			g.tl = -num(args, 1)
			nextLine(num(args, 0), num(args, 1))
		case "Tm":
			if m, ok := matrixArgs(args); ok {
				tm, tlm = m, m
			}
		case "T*":
			nextLine(0, -g.tl)
		case "Tj":
			if len(args) == 1 {
				show(args[0].RawString())
			}
		case "'":
			if len(args) == 1 {
				nextLine(0, -g.tl)
				show(args[0].RawString())
			}
		case "\"":
			if len(args) == 3 {
				g.tw, g.tc = args[0].Float64(), args[1].Float64()
				nextLine(0, -g.tl)
				show(args[2].RawString())
			}
		case "TJ":
			if len(args) != 1 {
				return
			}
			a := args[0]
			for i := 0; i < a.Len(); i++ {
				switch x := a.Index(i); x.Kind() {
				case pdf.String:
					show(x.RawString())
				case pdf.Integer, pdf.Real:
					tm = translate(-x.Float64()/1000*g.size*g.th, 0).times(tm)
				}
			}
		}
	})
	return ligatures.Replace(string(w.b))
}
