package extract

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"

	"github.com/fumiama/go-docx"
)

// DOCX limits besides Limits: how many entries the archive may have, and
// how many times MaxPageBytes all its entries may unpack to (the document
// itself may unpack to MaxPageBytes).
const (
	maxDOCXEntries   = 10000
	docxUnpackFactor = 4
)

// docxText reads a Word document's paragraphs and tables, in order, with
// github.com/fumiama/go-docx (tables become Markdown tables). The archive's
// declared sizes are checked first: the document part may unpack to at
// most MaxPageBytes and all parts to docxUnpackFactor times that, and
// archive/zip refuses a part that unpacks to more than it declares, so a
// zip bomb is refused before the library reads it.
func docxText(body []byte, lim Limits) (doc Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = Document{}, &Error{Reason: ReasonDamaged, Detail: fmt.Sprint(r), kind: KindDOCX}
		}
	}()
	damaged := func(format string, args ...any) *Error {
		e := newError(ReasonDamaged, format, args...)
		e.kind = KindDOCX
		return e
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return Document{}, damaged("not a zip archive: %v", err)
	}
	if len(zr.File) > maxDOCXEntries {
		return Document{}, damaged("more than %d parts", maxDOCXEntries)
	}
	var total uint64
	found := false
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if f.Name == "word/document.xml" {
			found = true
			if f.UncompressedSize64 > uint64(lim.MaxPageBytes) {
				return Document{}, newError(ReasonTooLarge, "the document unpacks to more than %d MiB (zip bomb?)", lim.MaxPageBytes>>20)
			}
		}
	}
	if !found {
		return Document{}, damaged("no word/document.xml")
	}
	if total > docxUnpackFactor*uint64(lim.MaxPageBytes) {
		return Document{}, newError(ReasonTooLarge, "the archive unpacks to more than %d MiB (zip bomb?)", docxUnpackFactor*lim.MaxPageBytes>>20)
	}
	d, err := docx.Parse(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return Document{}, damaged("%v", err)
	}
	var parts []string
	for _, it := range d.Document.Body.Items {
		switch x := it.(type) {
		case *docx.Paragraph:
			parts = append(parts, x.String())
		case *docx.Table:
			parts = append(parts, x.String())
		}
	}
	text := CleanText(strings.Join(parts, "\n\n"))
	if text == "" {
		return Document{}, &Error{Reason: ReasonNoText, Detail: "the document has no text", kind: KindDOCX}
	}
	doc = Document{Kind: KindDOCX}
	doc.Text, doc.Truncated = TruncateRunes(text, lim.MaxRunes)
	return doc, nil
}
