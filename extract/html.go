package extract

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Extraction cost grows faster than linearly with document size (a 5 MiB
// text-heavy page takes seconds), while at most Limits.MaxRunes of text are
// kept. So before extraction the tree is cut after this much text or this
// many nodes, in document order.
const (
	maxHTMLTextBytes = 512 << 10
	maxHTMLNodes     = 50000
)

// inertElements never hold readable text; they are dropped before
// extraction. <script type="application/ld+json"> is kept for metadata.
var inertElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true,
	"math": true, "iframe": true, "object": true, "embed": true, "canvas": true,
}

// HTML reads an HTML or XHTML document: its main text (boilerplate such as
// menus, footers and comments left out) as Markdown, and its title,
// author, publication date and canonical URL. contentType is the
// Content-Type header value (or a bare media type, or ""): its charset, if
// any, decodes the body, else the document's own <meta charset> or a
// guess. pageURL, when known, is where the document was fetched from (it
// resolves relative links and helps find the date); nil for a file.
//
// The body is untrusted data: it is parsed, never interpreted (scripts,
// styles and embedded objects are dropped). The tree is cut to fixed text
// and node budgets before extraction, Text is capped at lim.MaxRunes, and
// a panic inside the extraction libraries is refused as ReasonDamaged
// rather than crashing the caller. A document without readable text is
// refused with ReasonNoText.
func HTML(ctx context.Context, body []byte, contentType string, pageURL *url.URL, lim Limits) (d Document, err error) {
	lim = lim.withDefaults()
	if int64(len(body)) > lim.MaxBytes {
		return Document{}, newError(ReasonTooLarge, "more than %d bytes", lim.MaxBytes)
	}
	if err := ctx.Err(); err != nil {
		return Document{}, &Error{Reason: ReasonTimeout, cause: err, kind: KindHTML}
	}
	defer func() {
		if r := recover(); r != nil {
			d = Document{}
			err = htmlError(ReasonDamaged, fmt.Sprintf("extractor failed: %v", r))
		}
	}()
	d, err = readHTML(body, contentType, pageURL)
	if err != nil {
		return Document{}, err
	}
	if strings.TrimSpace(d.Text) == "" {
		return Document{}, htmlError(ReasonNoText, "no readable text found")
	}
	d.Text, d.Truncated = TruncateRunes(d.Text, lim.MaxRunes)
	return d, nil
}

// htmlError is a refusal of an HTML document; detail is clipped to 200 bytes.
func htmlError(r Reason, detail string) *Error {
	e := newError(r, "%s", detail)
	e.kind = KindHTML
	return e
}

// readHTML decodes, parses, prunes and extracts body.
func readHTML(body []byte, contentType string, pageURL *url.URL) (Document, error) {
	dec, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		dec = bytes.NewReader(body)
	}
	doc, err := html.Parse(dec)
	if err != nil {
		return Document{}, htmlError(ReasonNoText, "cannot parse HTML: "+err.Error())
	}
	pruneForExtraction(doc, maxHTMLTextBytes, maxHTMLNodes)
	res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{
		OriginalURL: pageURL,
		// When its own extraction finds too little, go-trafilatura tries
		// go-readability's. (Its second fallback, DOM Distiller, is not
		// linked: see internal/domdistillerstub.)
		EnableFallback:  true,
		ExcludeComments: true,
		// No TargetLanguage: language detection is not linked (see
		// internal/whatlanggostub), so one would refuse every page.
		// Fast mode finds dates in metadata, JSON-LD, <time> elements,
		// URLs and dated text patterns. The extensive mode would need
		// go-dateparser, which this program does not link (see go.mod).
		HtmlDateMode: trafilatura.Fast,
	})
	if err != nil || res == nil {
		return Document{}, htmlError(ReasonNoText, "no main text found")
	}
	d := Document{
		Kind:      KindHTML,
		Title:     cleanLine(res.Metadata.Title),
		Author:    cleanLine(res.Metadata.Author),
		Published: res.Metadata.Date,
	}
	if cu, err := url.Parse(res.Metadata.URL); err == nil && (cu.Scheme == "http" || cu.Scheme == "https") && cu.Host != "" {
		d.CanonicalURL = cu.String()
	}
	var text string
	if res.ContentNode != nil {
		var opts []converter.ConvertOptionFunc
		if pageURL != nil {
			opts = append(opts, converter.WithDomain(pageURL.Scheme+"://"+pageURL.Host))
		}
		if md, err := htmltomarkdown.ConvertNode(res.ContentNode, opts...); err == nil {
			text = string(md)
		}
	}
	if strings.TrimSpace(text) == "" {
		text = res.ContentText
	}
	d.Text = CleanText(text)
	return d, nil
}

// pruneForExtraction removes inert elements and everything after the first
// textBudget bytes of text or nodeBudget nodes.
func pruneForExtraction(doc *html.Node, textBudget, nodeBudget int) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if textBudget <= 0 || nodeBudget <= 0 {
				n.RemoveChild(c)
				c = next
				continue
			}
			switch c.Type {
			case html.TextNode:
				nodeBudget--
				textBudget -= len(c.Data)
			case html.ElementNode:
				switch {
				case isJSONLD(c):
					// kept whole for metadata; its text is not page text
				case inertElements[c.Data]:
					n.RemoveChild(c)
				default:
					nodeBudget--
					walk(c)
				}
			default:
				nodeBudget--
			}
			c = next
		}
	}
	walk(doc)
}

func isJSONLD(n *html.Node) bool {
	if n.Data != "script" {
		return false
	}
	for _, a := range n.Attr {
		if a.Key == "type" && strings.EqualFold(strings.TrimSpace(a.Val), "application/ld+json") {
			return true
		}
	}
	return false
}

// cleanLine is CleanText for single-line metadata.
func cleanLine(s string) string {
	return strings.Join(strings.Fields(CleanText(s)), " ")
}

// hasUTF16BOM reports whether body starts with a UTF-16 byte order mark: an
// HTML document in UTF-16, which the charset decoder reads, is not binary.
func hasUTF16BOM(body []byte) bool {
	return bytes.HasPrefix(body, []byte{0xFE, 0xFF}) || bytes.HasPrefix(body, []byte{0xFF, 0xFE})
}
