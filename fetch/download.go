package fetch

// One download over the guarded transport: redirects checked hop by hop
// (scheme, host, robots.txt), the accepted content types, the body read
// within MaxBytes after decompression, transport errors classified into
// *Error, and the Page built from what was read.

import (
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	doctext "github.com/researchbot/researchbot/extract"
)

// redirectError carries an *Error out of CheckRedirect.
type redirectError struct{ e *Error }

func (r *redirectError) Error() string { return r.e.Error() }

func (f *Fetcher) checkRedirect(obeyRobots bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		orig := via[0].URL.String()
		if len(via) > f.cfg.MaxRedirects {
			return &redirectError{newError(orig, ReasonTooManyRedirects, "more than %d redirects", f.cfg.MaxRedirects)}
		}
		if err := normalizeURL(req.URL); err != nil {
			return &redirectError{newError(orig, ReasonBadScheme, "redirect to %s: %v", clip(req.URL.String()), err)}
		}
		req.Host = req.URL.Host
		if why := refusedHost(req.Context(), req.URL); why != "" {
			return &redirectError{newError(orig, ReasonExcludedHost, "redirect to %s: %s", clip(req.URL.String()), why)}
		}
		if obeyRobots {
			if err := f.checkRobots(req.Context(), orig, req.URL); err != nil {
				var fe *Error
				if !errors.As(err, &fe) {
					fe = newError(orig, ReasonNetwork, "%v", err)
				}
				fe.Detail = "redirect to " + clip(req.URL.String()) + ": " + fe.Detail
				return &redirectError{fe}
			}
		}
		return nil
	}
}

var allowedTypes = map[string]bool{
	"text/html":             true,
	"application/xhtml+xml": true,
	"text/plain":            true,
	"application/pdf":       true,
}

// sniffedTypes are labels servers put on PDFs (and other files) they do
// not describe: such a body is read and accepted only if it is a PDF.
var sniffedTypes = map[string]bool{
	"application/octet-stream":   true,
	"binary/octet-stream":        true,
	"application/x-pdf":          true,
	"application/download":       true,
	"application/force-download": true,
}

func (f *Fetcher) get(ctx context.Context, rawURL string, u *url.URL) (Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, newError(rawURL, ReasonBadScheme, "invalid URL")
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := f.client.Do(req)
	if err != nil {
		return Page{}, f.classify(ctx, rawURL, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, newError(rawURL, ReasonHTTPStatus, "HTTP %s", clip(resp.Status))
	}
	ctHeader := resp.Header.Get("Content-Type")
	mediaType := ""
	if ctHeader != "" {
		mt, _, err := mime.ParseMediaType(ctHeader)
		if err != nil {
			return Page{}, newError(rawURL, ReasonContentType, "unparseable Content-Type %q", clip(ctHeader))
		}
		mediaType = mt
		if !allowedTypes[mt] && !sniffedTypes[mt] {
			return Page{}, newError(rawURL, ReasonContentType, "content type %q is not allowed", clip(mt))
		}
	}

	body, err := f.readBody(ctx, rawURL, resp)
	if err != nil {
		return Page{}, err
	}
	if len(body) == 0 {
		return Page{}, newError(rawURL, ReasonEmpty, "empty body")
	}
	if doctext.IsPDF(body) {
		return f.pdfPage(ctx, rawURL, resp, body)
	}
	if mediaType == "application/pdf" || sniffedTypes[mediaType] {
		return Page{}, newError(rawURL, ReasonContentType, "labelled %q but the body is not a PDF", mediaType)
	}
	sniffed := http.DetectContentType(body)
	if !strings.HasPrefix(sniffed, "text/") {
		return Page{}, newError(rawURL, ReasonContentType, "body is binary (%s) but labelled %q", sniffed, orNone(mediaType))
	}
	if mediaType == "" {
		mediaType, _, _ = mime.ParseMediaType(sniffed)
		ctHeader = sniffed
		if mediaType != "text/html" && mediaType != "text/plain" {
			return Page{}, newError(rawURL, ReasonContentType, "unlabelled body looks like %q", mediaType)
		}
	}

	final := resp.Request.URL
	ex, err := extract(body, mediaType, ctHeader, final, f.cfg.MaxTextRunes)
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			fe.URL = rawURL
			return Page{}, fe
		}
		return Page{}, newError(rawURL, ReasonEmpty, "extraction failed")
	}
	p := Page{
		URL:          rawURL,
		FinalURL:     final.String(),
		CanonicalURL: ex.CanonicalURL,
		Title:        ex.Title,
		Author:       ex.Author,
		Published:    ex.Published,
		Text:         ex.Text,
		Truncated:    ex.Truncated,
		ContentType:  mediaType,
		StatusCode:   resp.StatusCode,
		FetchedAt:    f.cfg.Clock.Now(),
	}
	p.CanonicalURL = cmp.Or(p.CanonicalURL, p.FinalURL)
	return p, nil
}

// decodedBody returns resp's body with any gzip Content-Encoding removed.
func (f *Fetcher) decodedBody(resp *http.Response) (io.Reader, error) {
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	switch enc {
	case "", "identity":
		return resp.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, &Error{Reason: ReasonNetwork, Detail: "malformed gzip body"}
		}
		return zr, nil
	default:
		return nil, &Error{Reason: ReasonContentType, Detail: fmt.Sprintf("unsupported Content-Encoding %q", clip(enc))}
	}
}

// readBody reads at most MaxBytes of decompressed body.
func (f *Fetcher) readBody(ctx context.Context, rawURL string, resp *http.Response) ([]byte, error) {
	limit := f.cfg.MaxBytes
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if (enc == "" || enc == "identity") && resp.ContentLength > limit {
		return nil, newError(rawURL, ReasonTooLarge, "Content-Length %d exceeds the %d-byte limit", resp.ContentLength, limit)
	}
	r, err := f.decodedBody(resp)
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			fe.URL = rawURL
			return nil, fe
		}
		return nil, newError(rawURL, ReasonNetwork, "%v", err)
	}
	body, err := readCapped(r, limit+1, resp.ContentLength)
	if int64(len(body)) > limit {
		return nil, newError(rawURL, ReasonTooLarge, "body exceeds the %d-byte limit after decompression", limit)
	}
	if err != nil {
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
			return nil, newError(rawURL, ReasonNetwork, "malformed gzip body")
		}
		return nil, f.classify(ctx, rawURL, err)
	}
	return body, nil
}

// classify turns a transport, dial or context error into an *Error.
func (f *Fetcher) classify(ctx context.Context, rawURL string, err error) *Error {
	var re *redirectError
	if errors.As(err, &re) {
		c := *re.e
		c.URL = rawURL
		return &c
	}
	var fe *Error
	if errors.As(err, &fe) {
		c := *fe
		c.URL = rawURL
		return &c
	}
	var be *blockedError
	if errors.As(err, &be) {
		return newError(rawURL, ReasonBlockedAddress, "%v", be)
	}
	if errors.Is(ctx.Err(), context.Canceled) && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e := newError(rawURL, ReasonNetwork, "canceled")
		e.cause = ctx.Err()
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e := newError(rawURL, ReasonTimeout, "no complete answer within %s", f.cfg.Timeout)
		e.cause = context.DeadlineExceeded
		return e
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return newError(rawURL, ReasonTimeout, "network timeout")
	}
	var rse *resolveError
	if errors.As(err, &rse) {
		return newError(rawURL, ReasonNetwork, "%v", rse)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return newError(rawURL, ReasonNetwork, "%v", err)
}

// readCapped reads at most limit bytes from r. The buffer starts at the
// Content-Length hint (or 32 KiB) and doubles, so a capped read allocates
// about twice the cap at worst.
func readCapped(r io.Reader, limit, hint int64) ([]byte, error) {
	size := int64(32 << 10)
	if hint > 0 {
		size = hint + 1
	}
	buf := make([]byte, 0, min(size, limit))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= limit {
				return buf, nil
			}
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
