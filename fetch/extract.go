package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html/charset"

	doctext "github.com/researchbot/researchbot/extract"
)

// extraction is what extract finds in a page body.
type extraction struct {
	Title, Author string
	CanonicalURL  string
	Published     time.Time
	Text          string
	Truncated     bool
}

// extract turns a body of the given media type ("text/html",
// "application/xhtml+xml" or "text/plain"; contentType is the full header,
// used for its charset) into capped text and metadata. HTML is read by
// package extract (doctext.HTML: pruning, main-text extraction, Markdown,
// metadata, its panic guard); plain text is decoded from its charset here.
// The body has already been bounded by Config.MaxBytes and read within the
// fetch's deadline; extraction is bounded by its own budgets (no context).
// Every failure is an *Error with ReasonEmpty.
func extract(body []byte, mediaType, contentType string, pageURL *url.URL, maxRunes int) (extraction, error) {
	if mediaType == "text/plain" {
		return plainText(body, contentType, maxRunes)
	}
	doc, err := doctext.HTML(context.Background(), body, contentType, pageURL, doctext.Limits{
		MaxBytes: max(int64(len(body)), 1), // already bounded by the fetch
		MaxRunes: maxRunes,
	})
	if err != nil {
		return extraction{}, htmlError(err)
	}
	return extraction{
		Title:        doc.Title,
		Author:       doc.Author,
		CanonicalURL: doc.CanonicalURL,
		Published:    doc.Published,
		Text:         doc.Text,
		Truncated:    doc.Truncated,
	}, nil
}

// plainText decodes a text/plain body from its charset and cleans it.
func plainText(body []byte, contentType string, maxRunes int) (extraction, error) {
	dec, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		dec = bytes.NewReader(body)
	}
	b, err := io.ReadAll(dec)
	if err != nil {
		return extraction{}, &Error{Reason: ReasonEmpty, Detail: "cannot decode text"}
	}
	var ex extraction
	ex.Text = doctext.CleanText(string(b))
	if strings.TrimSpace(ex.Text) == "" {
		return extraction{}, &Error{Reason: ReasonEmpty, Detail: "no readable text found"}
	}
	ex.Text, ex.Truncated = doctext.TruncateRunes(ex.Text, maxRunes)
	return ex, nil
}

// htmlError turns an HTML extraction error into an *Error with ReasonEmpty
// and the extractor's detail ("no readable text found", "no main text
// found", "extractor failed: …").
func htmlError(err error) *Error {
	var xe *doctext.Error
	if !errors.As(err, &xe) {
		return &Error{Reason: ReasonEmpty, Detail: "extraction failed"}
	}
	detail := xe.Detail
	if detail == "" {
		detail = xe.Error()
	}
	return &Error{Reason: ReasonEmpty, Detail: detail}
}
