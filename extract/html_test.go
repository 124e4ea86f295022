package extract

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// TestHTMLArticle reads a news article as a fetched page: its main text as
// Markdown without the boilerplate, and its metadata.
func TestHTMLArticle(t *testing.T) {
	body, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://gazette.test/story")
	d, err := HTML(context.Background(), body, "text/html; charset=utf-8", u, Limits{})
	if err != nil {
		t.Fatalf("HTML: %v", err)
	}
	if d.Kind != KindHTML || d.Title != "City Council Approves Riverside Solar Farm" || d.Author != "Maria Okonkwo" {
		t.Errorf("Kind=%q Title=%q Author=%q", d.Kind, d.Title, d.Author)
	}
	if y, m, day := d.Published.Date(); y != 2024 || m != time.March || day != 5 {
		t.Errorf("Published = %v, want 2024-03-05", d.Published)
	}
	if want := "https://www.harborgazette.example/news/2024/03/05/council-approves-riverside-solar-farm"; d.CanonicalURL != want {
		t.Errorf("CanonicalURL = %q, want %q", d.CanonicalURL, want)
	}
	for _, s := range []string{"voted 7-2 on Tuesday", "groundwater monitoring program", "## Concerns about the river"} {
		if !strings.Contains(d.Text, s) {
			t.Errorf("Text lacks %q", s)
		}
	}
	for _, s := range []string{"Subscribe today", "cookies", "All rights reserved", "Related stories"} {
		if strings.Contains(d.Text, s) {
			t.Errorf("Text contains boilerplate %q", s)
		}
	}
	if d.Truncated || d.PageCount != 0 || d.PageStarts != nil {
		t.Errorf("Truncated=%v PageCount=%d PageStarts=%v", d.Truncated, d.PageCount, d.PageStarts)
	}
}

// An HTML file (a shared file, a --file, a collection document) is read
// by Extract through its name's media type, the same way as a page.
func TestExtractHTMLFiles(t *testing.T) {
	body, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"story.html", "STORY.HTM", "story.xhtml"} {
		if !ReadsByName(name) {
			t.Errorf("ReadsByName(%q) = false", name)
		}
		mt := TypeByName(name)
		if k, ok := KindOf(nil, mt); !ok || k != KindHTML {
			t.Errorf("%s: TypeByName = %q, KindOf = %q %v", name, mt, k, ok)
		}
		d, err := Extract(context.Background(), body, mt, Limits{})
		if err != nil || d.Kind != KindHTML || !strings.Contains(d.Text, "voted 7-2 on Tuesday") || d.Title == "" {
			t.Errorf("%s: Kind=%q Title=%q err=%v", name, d.Kind, d.Title, err)
		}
	}
	if !strings.Contains(Accepted, "HTML (text/html)") {
		t.Errorf("Accepted = %q does not name HTML", Accepted)
	}
}

// The charset of the Content-Type header decodes the body; without one the
// document's <meta charset> does.
func TestHTMLCharset(t *testing.T) {
	ctx := context.Background()
	latin1 := []byte("<html><body><article><p>Le caf\xe9 du coin ouvre \xe0 sept heures, tous les jours de la semaine, et ferme tard le soir.</p></article></body></html>")
	d, err := HTML(ctx, latin1, "text/html; charset=iso-8859-1", nil, Limits{})
	if err != nil || !strings.Contains(d.Text, "café du coin ouvre à sept heures") {
		t.Errorf("header charset: %q, %v", d.Text, err)
	}
	meta := append([]byte(`<html><head><meta charset="iso-8859-1"></head>`), latin1[6:]...)
	d, err = Extract(ctx, meta, "text/html", Limits{})
	if err != nil || !strings.Contains(d.Text, "café du coin") {
		t.Errorf("meta charset: %q, %v", d.Text, err)
	}
}

func TestHTMLRefusals(t *testing.T) {
	ctx := context.Background()
	_, err := HTML(ctx, []byte("<html><body><script>var x=1</script></body></html>"), "text/html", nil, Limits{})
	if e := wantReason(t, err, ReasonNoText); !strings.HasPrefix(e.Error(), "no text") {
		t.Errorf("message %q", e.Error())
	}
	_, err = Extract(ctx, []byte("\x00\x01\xff\xfe\x00binary"), "text/html", Limits{})
	wantReason(t, err, ReasonUnsupported)
	_, err = Extract(ctx, []byte("<p>0123456789</p>"), "application/xhtml+xml", Limits{MaxBytes: 5})
	wantReason(t, err, ReasonTooLarge)
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = HTML(done, []byte("<p>words</p>"), "text/html", nil, Limits{})
	if e := wantReason(t, err, ReasonTimeout); !errors.Is(e, context.Canceled) {
		t.Errorf("err %v does not wrap the context's error", e)
	}
}

func TestHTMLTruncatesToMaxRunes(t *testing.T) {
	body, err := os.ReadFile("testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	d, err := HTML(context.Background(), body, "text/html", nil, Limits{MaxRunes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(d.Text); !d.Truncated || n > 100 || n < 80 {
		t.Errorf("Truncated=%v, %d runes, want 80..100", d.Truncated, n)
	}
}

// largePage is a 5 MiB text-heavy page (DefaultMaxBytes) built from the
// article fixture's story body repeated.
func largePage(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/article.html")
	if err != nil {
		tb.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, `<div class="story-body">`)
	j := strings.Index(s, "</div>\n    </article>")
	var sb strings.Builder
	sb.WriteString(s[:i])
	for sb.Len() < DefaultMaxBytes {
		sb.WriteString(s[i:j] + "</div>")
	}
	sb.WriteString(s[j:])
	return []byte(sb.String())
}

// BenchmarkHTMLLargePage prints how long a 5 MiB text-heavy page takes to
// extract (fetch reads every page through Extract).
func BenchmarkHTMLLargePage(b *testing.B) {
	page := largePage(b)
	for b.Loop() {
		if _, err := Extract(context.Background(), page, "text/html", Limits{MaxBytes: int64(len(page))}); err != nil {
			b.Fatal(err)
		}
	}
}

// A 5 MiB text-heavy page is extracted from a tree cut to the extraction
// budgets, so its cost is bounded by the budgets, not by the page.
func TestHTMLLargePageIsBounded(t *testing.T) {
	page := largePage(t)
	doc, err := html.Parse(strings.NewReader(string(page)))
	if err != nil {
		t.Fatal(err)
	}
	pruneForExtraction(doc, maxHTMLTextBytes, maxHTMLNodes)
	var textBytes, nodes int
	var count func(n *html.Node)
	count = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			nodes++
			if c.Type == html.TextNode {
				textBytes += len(c.Data)
			}
			count(c)
		}
	}
	count(doc)
	// The budget is spent by the node that crosses it, so one paragraph of
	// slack is allowed on the text budget.
	if textBytes > maxHTMLTextBytes+64<<10 || nodes > 2*maxHTMLNodes {
		t.Errorf("pruned tree of a %d-byte page: %d text bytes, %d nodes; budgets %d and %d",
			len(page), textBytes, nodes, maxHTMLTextBytes, maxHTMLNodes)
	}
	d, err := Extract(context.Background(), page, "text/html", Limits{MaxBytes: int64(len(page))})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || utf8.RuneCountInString(d.Text) > DefaultMaxRunes || d.Title == "" {
		t.Errorf("Truncated=%v runes=%d Title=%q", d.Truncated, utf8.RuneCountInString(d.Text), d.Title)
	}
}

func TestPruneForExtraction(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<html><head><script>evil()</script>` +
		`<script type="application/ld+json">{"author":"A"}</script><style>p{}</style></head>` +
		`<body><p>one</p><svg><text>drawn</text></svg><p>two</p><p>three</p><p>four</p></body></html>`))
	if err != nil {
		t.Fatal(err)
	}
	pruneForExtraction(doc, 6, 1000) // "one" + "two" spend the text budget
	var sb strings.Builder
	if err := html.Render(&sb, doc); err != nil {
		t.Fatal(err)
	}
	got := sb.String()
	for _, want := range []string{`{"author":"A"}`, "<p>one</p>", "<p>two</p>"} {
		if !strings.Contains(got, want) {
			t.Errorf("pruned doc lacks %q: %s", want, got)
		}
	}
	for _, gone := range []string{"evil()", "p{}", "drawn", "three", "four"} {
		if strings.Contains(got, gone) {
			t.Errorf("pruned doc still has %q: %s", gone, got)
		}
	}
}

func TestTruncateRunes(t *testing.T) {
	s, cut := TruncateRunes("héllo wörld", 5)
	if !cut || s != "héllo" {
		t.Errorf("got %q %v", s, cut)
	}
	s, cut = TruncateRunes("héllo", 5)
	if cut || s != "héllo" {
		t.Errorf("got %q %v", s, cut)
	}
}

func FuzzHTML(f *testing.F) {
	if b, err := os.ReadFile("testdata/article.html"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"", "<html>", "<p>hello</p>", "\x00\xff\xfe<title>x</title>", "\xff\xfe<\x00p\x00>\x00h\x00i\x00",
		`<html><head><meta charset="shift_jis"><link rel="canonical" href="javascript:alert(1)"></head><body><article><p>` + strings.Repeat("word ", 400) + `</p></article></body></html>`,
		"<table><tr><td><table><tr><td>" + strings.Repeat("<div>", 500),
	} {
		f.Add([]byte(s))
	}
	const maxRunes = 300
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		start := time.Now()
		d, err := Extract(context.Background(), data, "text/html", Limits{MaxRunes: maxRunes})
		if el := time.Since(start); el > 10*time.Second {
			t.Fatalf("Extract took %v on %d bytes", el, len(data))
		}
		if err != nil {
			if e := (*Error)(nil); !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		if n := utf8.RuneCountInString(d.Text); n > maxRunes {
			t.Fatalf("Text has %d runes > %d", n, maxRunes)
		}
		if !utf8.ValidString(d.Text) || !utf8.ValidString(d.Title) || !utf8.ValidString(d.Author) {
			t.Fatal("invalid UTF-8 in output")
		}
		if strings.TrimSpace(d.Text) == "" {
			t.Fatal("success with empty text")
		}
		if d.CanonicalURL != "" && !strings.HasPrefix(d.CanonicalURL, "http") {
			t.Fatalf("CanonicalURL %q is not http(s)", d.CanonicalURL)
		}
	})
}
