// Package extract turns the bytes of a document into readable text, page by
// page where the format has pages. It is the one entry point for every kind
// of document the program reads: web pages and PDFs fetched from the web
// (package fetch), files given to a run or shared in Slack, and the
// document collection. HTML is read the same way wherever it comes from:
// its main text as Markdown, with its title, author, date and canonical URL.
//
// Every input is untrusted data: it is parsed, never interpreted (a PDF's
// JavaScript, forms and links are ignored). Each document is read within
// Limits (bytes, pages, decompressed bytes per page, runes of text) and the
// caller's context deadline; a document that cannot be read is refused with
// an *Error whose message a person can read, never a crash.
package extract

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kind is a kind of document.
type Kind string

// The kinds of documents Extract reads.
const (
	KindPDF      Kind = "pdf"
	KindText     Kind = "text"
	KindMarkdown Kind = "markdown"
	KindCSV      Kind = "csv"
	KindDOCX     Kind = "docx"
	KindHTML     Kind = "html"
)

// mediaKinds maps the media types Extract accepts to their kind.
var mediaKinds = map[string]Kind{
	"application/pdf":       KindPDF,
	"text/plain":            KindText,
	"text/markdown":         KindMarkdown,
	"text/x-markdown":       KindMarkdown,
	"text/csv":              KindCSV,
	"text/html":             KindHTML,
	"application/xhtml+xml": KindHTML,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": KindDOCX,
}

// Accepted lists the media types Extract reads, for messages to people.
const Accepted = "PDF (application/pdf), Word (.docx), plain text (text/plain), Markdown (text/markdown), CSV (text/csv), HTML (text/html)"

// Limits bounds the reading of one document. Zero fields take the defaults.
type Limits struct {
	// MaxBytes refuses a larger input; default DefaultMaxBytes (fetch's body limit).
	MaxBytes int64
	// MaxPages is how many pages of a PDF are read; default 300.
	MaxPages int
	// MaxPageBytes bounds the decompressed content (and font maps) of one
	// PDF page, the guard against decompression bombs; default 16 MiB.
	MaxPageBytes int64
	// MaxRunes caps Document.Text (and so each page's text); default 20000.
	MaxRunes int
}

// Default values for Limits.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultMaxPages     = 300
	DefaultMaxPageBytes = 16 << 20
	DefaultMaxRunes     = 20000
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	if l.MaxPageBytes <= 0 {
		l.MaxPageBytes = DefaultMaxPageBytes
	}
	if l.MaxRunes <= 0 {
		l.MaxRunes = DefaultMaxRunes
	}
	return l
}

// Document is the text of a document. Every string in it is untrusted.
type Document struct {
	Kind  Kind
	Title string
	// Author, Published and CanonicalURL are what an HTML document says of
	// itself (zero when it says nothing, and for other kinds). CanonicalURL
	// is an absolute http(s) URL or "".
	Author       string
	Published    time.Time
	CanonicalURL string
	// Text is the readable text, at most Limits.MaxRunes runes.
	Text string
	// PageStarts holds, for a paged document, the byte offset in Text at
	// which each page read starts: page n (from 1) is
	// Text[PageStarts[n-1]:PageStarts[n]] (the last runs to the end).
	PageStarts []int
	// PageCount is how many pages the document has (read or not); 0 for
	// documents without pages.
	PageCount int
	// Truncated reports that Text was cut to Limits.MaxRunes.
	Truncated bool
	// Note says what was left out and why, for example
	// "more than 300 pages: read the first 300".
	Note string
}

// Reason classifies why a document cannot be read.
type Reason string

// The reasons a document is refused.
const (
	ReasonEncrypted   Reason = "encrypted"
	ReasonNoText      Reason = "no_text"
	ReasonDamaged     Reason = "damaged"
	ReasonTooLarge    Reason = "too_large"
	ReasonUnsupported Reason = "unsupported"
	ReasonTimeout     Reason = "timeout"
)

// Error says why a document cannot be read, in words a person can read.
type Error struct {
	Reason Reason
	// Detail adds what was found, if anything ("AES-256 encryption").
	Detail string
	cause  error
	kind   Kind // the kind refused, when not a PDF
}

// Error returns the reason for people: "encrypted PDF", "no text layer
// (scanned images?)", "damaged PDF: …", and so on.
func (e *Error) Error() string {
	name := "PDF"
	switch e.kind {
	case KindDOCX:
		name = "DOCX"
	case KindHTML:
		name = "HTML"
	}
	var s string
	switch {
	case e.Reason == ReasonEncrypted:
		s = "encrypted " + name
	case e.Reason == ReasonNoText && e.kind == KindPDF || e.Reason == ReasonNoText && e.kind == "":
		s = "no text layer (scanned images?)"
	case e.Reason == ReasonNoText:
		s = "no text"
	case e.Reason == ReasonDamaged:
		s = "damaged " + name
	case e.Reason == ReasonTooLarge:
		s = "document too large"
	case e.Reason == ReasonUnsupported:
		s = "unsupported kind of document"
	case e.Reason == ReasonTimeout:
		s = "not read within the time allowed"
	default:
		s = string(e.Reason)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the cause, if any (context.DeadlineExceeded for a timeout).
func (e *Error) Unwrap() error { return e.cause }

func newError(r Reason, format string, args ...any) *Error {
	d := fmt.Sprintf(format, args...)
	if len(d) > 200 {
		d = d[:200] + "…"
	}
	return &Error{Reason: r, Detail: d}
}

// KindOf returns the kind of a body labelled with mediaType (a Content-Type
// header value or a bare media type; "" when unlabelled). A body that starts
// like a PDF is a PDF whatever its label says; otherwise the label decides
// (and PDF refuses a body labelled PDF that is not one as damaged).
// ok is false for a kind Extract does not read.
func KindOf(body []byte, mediaType string) (Kind, bool) {
	if IsPDF(body) {
		return KindPDF, true
	}
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return "", false
	}
	k, ok := mediaKinds[mt]
	return k, ok // a body labelled PDF that is not one is PDF's to refuse
}

// IsPDF reports whether body starts with a PDF header ("%PDF-"). A file
// name's ".pdf" suffix says nothing: only the bytes do.
func IsPDF(body []byte) bool { return bytes.HasPrefix(body, []byte("%PDF-")) }

// Extract reads body, labelled with mediaType, within lim. Kinds other
// than those listed in Accepted are refused with ReasonUnsupported, naming
// what is accepted.
func Extract(ctx context.Context, body []byte, mediaType string, lim Limits) (Document, error) {
	lim = lim.withDefaults()
	if int64(len(body)) > lim.MaxBytes {
		return Document{}, newError(ReasonTooLarge, "more than %d bytes", lim.MaxBytes)
	}
	k, ok := KindOf(body, mediaType)
	if !ok {
		mt, _, _ := mime.ParseMediaType(mediaType)
		return Document{}, newError(ReasonUnsupported, "%q; accepted: %s", orNone(mt), Accepted)
	}
	switch k {
	case KindPDF:
		return PDF(ctx, body, lim)
	case KindDOCX:
		return docxText(body, lim)
	case KindHTML:
		if looksBinary(body) && !hasUTF16BOM(body) {
			return Document{}, newError(ReasonUnsupported, "binary data labelled as %s", k)
		}
		return HTML(ctx, body, mediaType, nil, lim)
	}
	return plain(body, k, lim)
}

// plain reads UTF-8 text, Markdown or CSV as it is.
func plain(body []byte, k Kind, lim Limits) (Document, error) {
	if looksBinary(body) {
		return Document{}, newError(ReasonUnsupported, "binary data labelled as %s", k)
	}
	text := CleanText(string(body))
	if text == "" {
		return Document{}, &Error{Reason: ReasonNoText, Detail: "empty " + string(k), kind: k}
	}
	d := Document{Kind: k}
	d.Text, d.Truncated = TruncateRunes(text, lim.MaxRunes)
	return d, nil
}

// looksBinary reports whether body, labelled as text, is binary data: not
// UTF-8 and with a NUL byte in its first 4 KiB.
func looksBinary(body []byte) bool {
	return !utf8.Valid(body) && strings.ContainsRune(string(body[:min(len(body), 4096)]), 0)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// CleanText makes text valid UTF-8, normalises line endings, drops control
// characters other than newline, tab and form feed's page break (which
// becomes a newline), collapses runs of blank lines and trims the ends.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\f':
			return '\n'
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(s)
}

// TruncateRunes cuts s to at most limit runes, preferring to cut at a
// whitespace boundary in the last tenth, and reports whether it cut.
func TruncateRunes(s string, limit int) (string, bool) {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s, false
	}
	n := 0
	cut := len(s)
	for i := range s {
		if n == limit {
			cut = i
			break
		}
		n++
	}
	out := s[:cut]
	if ws := strings.LastIndexFunc(out, unicode.IsSpace); ws > 0 && utf8.RuneCountInString(out[ws:]) <= limit/10+1 {
		out = out[:ws]
	}
	return strings.TrimRightFunc(out, unicode.IsSpace), true
}
