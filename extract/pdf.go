package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// The PDF library is github.com/ledongthuc/pdf, a maintained fork of
// rsc.io/pdf, chosen by measurement against github.com/dslipak/pdf (see
// pdfbench_test.go). It has no package-level work besides a glyph-name
// table, and no cgo.

// PDF reads the text of a PDF page by page within lim and ctx's deadline.
// Pages are read in order until MaxPages pages or MaxRunes runes of text;
// Document.PageStarts keeps where each page read starts in Text. Before a
// page is read, its decompressed content streams and font maps are measured
// against MaxPageBytes, so a decompression bomb is refused before the
// library parses it. The library reads the PDF only through a
// boundedReader, which stops it (whatever loop it is in) once ctx is done
// or once it has read the file over readPasses times, so a cyclic page
// tree or xref chain ends in an error instead of a hung worker; opening
// the file and each page have a budget of their own. Encrypted PDFs
// (that need a password, or use encryption the library cannot read),
// PDFs without a text layer and damaged PDFs are refused with an *Error;
// a panic inside the library becomes ReasonDamaged.
func PDF(ctx context.Context, body []byte, lim Limits) (doc Document, err error) {
	lim = lim.withDefaults()
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				doc, err = Document{}, e
				return
			}
			doc, err = Document{}, newError(ReasonDamaged, "%v", r)
		}
	}()
	if int64(len(body)) > lim.MaxBytes {
		return Document{}, newError(ReasonTooLarge, "more than %d bytes", lim.MaxBytes)
	}
	if !IsPDF(body) {
		return Document{}, newError(ReasonDamaged, "no PDF header")
	}
	br := newBoundedReader(ctx, body)
	r, err := pdf.NewReader(br, int64(len(body)))
	if br.err != nil {
		return Document{}, br.err
	}
	if err != nil {
		return Document{}, openError(err, body)
	}
	doc = Document{Kind: KindPDF, Title: infoTitle(r), PageCount: r.NumPage()}
	if doc.PageCount == 0 {
		return Document{}, newError(ReasonDamaged, "no pages")
	}
	var b strings.Builder
	runes, unreadable := 0, 0
	for n := 1; n <= doc.PageCount; n++ {
		if n > lim.MaxPages {
			doc.Note = fmt.Sprintf("more than %d pages: read the first %d", lim.MaxPages, lim.MaxPages)
			break
		}
		if err := ctx.Err(); err != nil {
			return Document{}, &Error{Reason: ReasonTimeout, Detail: fmt.Sprintf("stopped at page %d of %d", n, doc.PageCount), cause: err}
		}
		br.refill()
		text, err := pageText(r.Page(n), lim)
		if br.err != nil {
			return Document{}, br.err
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return Document{}, e
			}
			unreadable++ // one bad page does not lose the others
		}
		text = CleanText(text)
		sep := ""
		if b.Len() > 0 && text != "" {
			sep = "\n\n"
		}
		budget := lim.MaxRunes - runes - len(sep)
		if budget <= 0 && text != "" {
			doc.Truncated = true
			break
		}
		text, cut := TruncateRunes(text, budget)
		if text == "" {
			sep = ""
		}
		b.WriteString(sep)
		doc.PageStarts = append(doc.PageStarts, b.Len())
		b.WriteString(text)
		runes += len(sep) + utf8.RuneCountInString(text)
		if cut {
			doc.Truncated = true
			break
		}
	}
	doc.Text = b.String()
	if strings.TrimSpace(doc.Text) == "" {
		if unreadable == len(doc.PageStarts) {
			return Document{}, newError(ReasonDamaged, "no page could be read")
		}
		return Document{}, &Error{Reason: ReasonNoText}
	}
	return doc, nil
}

// pageText returns the plain text of one page after checking that its
// decompressed content and font maps fit in lim.MaxPageBytes.
func pageText(p pdf.Page, lim Limits) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("page: %v", r)
		}
	}()
	if p.V.IsNull() {
		return "", errors.New("missing page")
	}
	budget := lim.MaxPageBytes
	streams := []pdf.Value{p.V.Key("Contents")}
	for _, name := range p.Fonts() {
		streams = append(streams, p.Font(name).V.Key("ToUnicode"))
	}
	for _, s := range streams {
		n, err := streamSize(s, budget)
		if err != nil {
			return "", err
		}
		budget -= n
		if budget < 0 {
			return "", newError(ReasonTooLarge, "a page expands to more than %d MiB (decompression bomb?)", lim.MaxPageBytes>>20)
		}
	}
	return layoutText(p), nil
}

// streamSize returns the decompressed size of a stream or an array of
// streams, reading at most limit+1 bytes. A stream the library cannot
// decode counts as what was read of it; the page's own reading reports it.
func streamSize(v pdf.Value, limit int64) (int64, error) {
	var total int64
	read := func(s pdf.Value) {
		rc := s.Reader()
		defer rc.Close()
		n, _ := io.Copy(io.Discard, io.LimitReader(rc, limit-total+1))
		total += n
	}
	switch v.Kind() {
	case pdf.Stream:
		read(v)
	case pdf.Array:
		for i := 0; i < v.Len() && total <= limit; i++ {
			if s := v.Index(i); s.Kind() == pdf.Stream {
				read(s)
			}
		}
	}
	return total, nil
}

// openError classifies an error from opening a PDF.
func openError(err error, body []byte) *Error {
	msg := err.Error()
	switch {
	case errors.Is(err, pdf.ErrInvalidPassword):
		return newError(ReasonEncrypted, "a password is needed")
	case strings.Contains(msg, "encrypt") || bytes.Contains(body, []byte("/Encrypt")) && strings.HasPrefix(msg, "unsupported"):
		return newError(ReasonEncrypted, "%s", strings.TrimPrefix(msg, "unsupported PDF: "))
	}
	return newError(ReasonDamaged, "%s", msg)
}

// infoTitle returns the document's title from its Info dictionary, if any.
func infoTitle(r *pdf.Reader) string {
	t := r.Trailer().Key("Info").Key("Title")
	if t.Kind() != pdf.String {
		return ""
	}
	return strings.Join(strings.Fields(CleanText(t.Text())), " ")
}

// readPasses is how many times over its size the library may read a PDF
// (plus a floor for small files) to open it or to read one page before the
// reading is deemed a loop.
const (
	readPasses = 16
	readFloor  = 32 << 20
)

// boundedReader is the io.ReaderAt the library reads a PDF through. Once
// ctx is done or the read budget is spent, every read panics with the
// *Error that says why: the library cannot be interrupted otherwise, and
// every loop in it reads. PDF recovers the panic.
type boundedReader struct {
	headerShim
	ctx  context.Context
	left int64
	err  *Error
}

func newBoundedReader(ctx context.Context, body []byte) *boundedReader {
	r := &boundedReader{headerShim: headerShim{body}, ctx: ctx}
	r.refill()
	return r
}

// refill gives the next step (opening, or one page) its read budget.
func (r *boundedReader) refill() { r.left = readPasses*int64(len(r.b)) + readFloor }

func (r *boundedReader) ReadAt(p []byte, off int64) (int, error) {
	if r.err == nil {
		r.left -= int64(len(p))
		if err := r.ctx.Err(); err != nil {
			r.err = &Error{Reason: ReasonTimeout, Detail: "the deadline passed while reading", cause: err}
		} else if r.left < 0 {
			r.err = newError(ReasonDamaged, "its structure loops (the file was read over more than %d times)", readPasses)
		}
	}
	if r.err != nil {
		panic(r.err)
	}
	return r.headerShim.ReadAt(p, off)
}

// headerShim presents a PDF whose header names a version the library does
// not know (PDF 2.0, or a header line not ended by a newline) as "%PDF-1.7".
// Only the header's first nine bytes, a comment the library never parses
// otherwise, are changed.
type headerShim struct{ b []byte }

const shimHeader = "%PDF-1.7\n"

func (h headerShim) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(h.b)) {
		return 0, io.EOF
	}
	n := copy(p, h.b[off:])
	if off < int64(len(shimHeader)) && bytes.HasPrefix(h.b, []byte("%PDF-")) {
		copy(p[:n], shimHeader[off:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
