package fetch

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
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

// Extraction cost grows faster than linearly with document size (a 5 MiB
// text-heavy page takes seconds), while at most MaxTextRunes of text are
// kept. So before extraction the tree is cut after this much text or this
// many nodes, in document order.
const (
	maxExtractTextBytes = 512 << 10
	maxExtractNodes     = 50000
)

// inertElements never hold readable text; they are dropped before
// extraction. <script type="application/ld+json"> is kept for metadata.
var inertElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true,
	"math": true, "iframe": true, "object": true, "embed": true, "canvas": true,
}

// pruneForExtraction removes inert elements and everything after the first
// textBudget bytes of text or nodeBudget nodes.
func pruneForExtraction(doc *html.Node, textBudget, nodeBudget int) {
	var walk func(n *html.Node) bool // reports whether a budget is spent
	walk = func(n *html.Node) bool {
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
		return textBudget <= 0 || nodeBudget <= 0
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

// extract turns a body of the given media type ("text/html",
// "application/xhtml+xml" or "text/plain"; contentType is the full header,
// used for its charset) into capped text and metadata. The body is untrusted
// data: it is parsed, never interpreted. A panic inside the extraction
// libraries is reported as ReasonEmpty rather than crashing the caller.
func extract(body []byte, mediaType, contentType string, pageURL *url.URL, maxRunes int) (ex extraction, err error) {
	defer func() {
		if r := recover(); r != nil {
			ex = extraction{}
			err = &Error{Reason: ReasonEmpty, Detail: fmt.Sprintf("extractor failed: %v", r)}
		}
	}()
	dec, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		dec = bytes.NewReader(body)
	}
	if mediaType == "text/plain" {
		b, err := io.ReadAll(dec)
		if err != nil {
			return extraction{}, &Error{Reason: ReasonEmpty, Detail: "cannot decode text"}
		}
		ex.Text = cleanText(string(b))
	} else {
		ex, err = extractHTML(dec, pageURL)
		if err != nil {
			return extraction{}, err
		}
	}
	if strings.TrimSpace(ex.Text) == "" {
		return extraction{}, &Error{Reason: ReasonEmpty, Detail: "no readable text found"}
	}
	ex.Text, ex.Truncated = truncateRunes(ex.Text, maxRunes)
	return ex, nil
}

func extractHTML(r io.Reader, pageURL *url.URL) (extraction, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return extraction{}, &Error{Reason: ReasonEmpty, Detail: "cannot parse HTML: " + clip(err.Error())}
	}
	pruneForExtraction(doc, maxExtractTextBytes, maxExtractNodes)
	res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{
		OriginalURL:     pageURL,
		EnableFallback:  true,
		ExcludeComments: true,
		// Fast mode finds dates in metadata, JSON-LD, <time> elements,
		// URLs and dated text patterns. The extensive mode would need
		// go-dateparser, which this program does not link (see go.mod).
		HtmlDateMode: trafilatura.Fast,
	})
	if err != nil || res == nil {
		return extraction{}, &Error{Reason: ReasonEmpty, Detail: "no main text found"}
	}
	ex := extraction{
		Title:     cleanLine(res.Metadata.Title),
		Author:    cleanLine(res.Metadata.Author),
		Published: res.Metadata.Date,
	}
	if cu, err := url.Parse(res.Metadata.URL); err == nil && (cu.Scheme == "http" || cu.Scheme == "https") && cu.Host != "" {
		ex.CanonicalURL = cu.String()
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
	ex.Text = cleanText(text)
	return ex, nil
}

// cleanText is the one cleaning rule for extracted text (doctext.CleanText).
func cleanText(s string) string { return doctext.CleanText(s) }

// cleanLine is cleanText for single-line metadata.
func cleanLine(s string) string {
	return strings.Join(strings.Fields(cleanText(s)), " ")
}

// truncateRunes is the one rule for capping text (doctext.TruncateRunes).
func truncateRunes(s string, limit int) (string, bool) { return doctext.TruncateRunes(s, limit) }
