package fetch

import (
	"context"
	"errors"
	"net/http"

	doctext "github.com/researchbot/researchbot/extract"
)

// pdfPage reads a fetched PDF page by page (package extract) within the
// fetch's byte limit, MaxPDFPages, MaxTextRunes and ctx's deadline.
func (f *Fetcher) pdfPage(ctx context.Context, rawURL string, resp *http.Response, body []byte) (Page, error) {
	doc, err := doctext.PDF(ctx, body, doctext.Limits{
		MaxBytes: f.cfg.MaxBytes,
		MaxPages: f.cfg.MaxPDFPages,
		MaxRunes: f.cfg.MaxTextRunes,
	})
	if err != nil {
		return Page{}, pdfError(rawURL, err)
	}
	final := resp.Request.URL.String()
	return Page{
		URL:          rawURL,
		FinalURL:     final,
		CanonicalURL: final,
		Title:        doc.Title,
		Text:         doc.Text,
		Truncated:    doc.Truncated,
		ContentType:  "application/pdf",
		Kind:         string(doctext.KindPDF),
		PageStarts:   doc.PageStarts,
		PageCount:    doc.PageCount,
		Note:         doc.Note,
		StatusCode:   resp.StatusCode,
		FetchedAt:    f.cfg.Clock.Now(),
	}, nil
}

// pdfError turns an extraction error into an *Error: a deadline is
// ReasonTimeout, a size bound ReasonTooLarge, anything else ReasonUnreadable
// with the extractor's words ("encrypted PDF", "no text layer (scanned
// images?)", "damaged PDF: …").
func pdfError(rawURL string, err error) *Error {
	var xe *doctext.Error
	if !errors.As(err, &xe) {
		return newError(rawURL, ReasonUnreadable, "damaged PDF: %v", err)
	}
	reason := ReasonUnreadable
	switch xe.Reason {
	case doctext.ReasonTimeout:
		reason = ReasonTimeout
	case doctext.ReasonTooLarge:
		reason = ReasonTooLarge
	}
	e := newError(rawURL, reason, "%s", xe.Error())
	e.cause = errors.Unwrap(xe)
	return e
}
