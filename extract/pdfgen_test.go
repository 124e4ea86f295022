package extract

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// pdfSpec describes a PDF for buildPDF: small, valid PDFs written by the
// tests themselves, for the cases no shipped file covers on every machine.
type pdfSpec struct {
	title string
	// pages are the pages' content streams; an empty string is a page
	// without contents.
	pages []string
	// shared, when set, is the one content stream of every page (a large
	// page count at a small size, as a page duplicated by a tool).
	shared     string
	sharedN    int
	flate      bool   // compress content streams with FlateDecode
	javaScript string // an OpenAction running this JavaScript
	// font, when set, is the font dictionary of /F1 in place of
	// Helvetica (which lists no widths).
	font string
}

// textOps returns a content stream showing each line in Helvetica.
func textOps(lines ...string) string {
	var b strings.Builder
	b.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, l := range lines {
		l = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(l)
		fmt.Fprintf(&b, "(%s) Tj T*\n", l)
	}
	b.WriteString("ET\n")
	return b.String()
}

// buildPDF writes a PDF: catalog, page tree, one font, an Info title, the
// pages and their contents, a cross-reference table and a trailer.
func buildPDF(s pdfSpec) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) int {
		offsets = append(offsets, b.Len())
		n := len(offsets)
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", n, body)
		return n
	}
	stream := func(data string) int {
		dict := ""
		if s.flate {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write([]byte(data))
			w.Close()
			data, dict = z.String(), "/Filter /FlateDecode "
		}
		return obj(fmt.Sprintf("<< %s/Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	// Objects 1–4 are fixed: catalog, page tree, font, info.
	npages := len(s.pages)
	if s.shared != "" {
		npages = s.sharedN
	}
	const firstPage = 6
	catalog := "<< /Type /Catalog /Pages 2 0 R"
	if s.javaScript != "" {
		catalog += " /OpenAction 5 0 R"
	}
	obj(catalog + " >>")
	var kids strings.Builder
	// Page objects follow object 5, each page's contents after it (or
	// the one shared content stream right after object 5).
	next := firstPage
	if s.shared != "" {
		next++
	}
	pageObj := make([]int, npages)
	for i := range npages {
		pageObj[i] = next
		next++
		if s.shared == "" && s.pages[i] != "" {
			next++
		}
		fmt.Fprintf(&kids, "%d 0 R ", pageObj[i])
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), npages))
	font := "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
	if s.font != "" {
		font = s.font
	}
	obj(font)
	obj(fmt.Sprintf("<< /Title (%s) /Producer (researchbot tests) >>", s.title))
	js := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s.javaScript)
	obj(fmt.Sprintf("<< /Type /Action /S /JavaScript /JS (%s) >>", js))
	shared := 0
	if s.shared != "" {
		shared = stream(s.shared)
	}
	const res = "/Resources << /Font << /F1 3 0 R >> >>"
	for i := range npages {
		switch {
		case shared != 0:
			obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] %s /Contents %d 0 R >>", res, shared))
		case s.pages[i] == "":
			obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] %s >>", res))
		default:
			obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] %s /Contents %d 0 R >>", res, len(offsets)+2))
			stream(s.pages[i])
		}
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}
