package fetch

import (
	"errors"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestExtractArticleFixture(t *testing.T) {
	body, err := os.ReadFile("../extract/testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := extract(body, "text/html", "text/html; charset=utf-8", mustURL(t, "http://gazette.test/story"), 20000)
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	t.Logf("text:\n%s", ex.Text)
	if want := "City Council Approves Riverside Solar Farm"; ex.Title != want {
		t.Errorf("Title = %q, want %q", ex.Title, want)
	}
	if ex.Author != "Maria Okonkwo" {
		t.Errorf("Author = %q", ex.Author)
	}
	if y, m, d := ex.Published.Date(); y != 2024 || m != time.March || d != 5 {
		t.Errorf("Published = %v, want 2024-03-05", ex.Published)
	}
	if want := "https://www.harborgazette.example/news/2024/03/05/council-approves-riverside-solar-farm"; ex.CanonicalURL != want {
		t.Errorf("CanonicalURL = %q, want %q", ex.CanonicalURL, want)
	}
	for _, s := range []string{"voted 7-2 on Tuesday", "groundwater monitoring program", "late 2025"} {
		if !strings.Contains(ex.Text, s) {
			t.Errorf("Text lacks %q", s)
		}
	}
	for _, s := range []string{"Subscribe today", "cookies", "All rights reserved", "Related stories"} {
		if strings.Contains(ex.Text, s) {
			t.Errorf("Text contains boilerplate %q", s)
		}
	}
	if !strings.Contains(ex.Text, "## Concerns about the river") {
		t.Errorf("Text is not Markdown (no ## heading)")
	}
	if ex.Truncated {
		t.Errorf("Truncated = true for a short article")
	}
}

func TestExtractTruncatesToMaxRunes(t *testing.T) {
	body, err := os.ReadFile("../extract/testdata/article.html")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := extract(body, "text/html", "text/html", mustURL(t, "http://gazette.test/story"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Truncated {
		t.Error("Truncated = false")
	}
	if n := utf8.RuneCountInString(ex.Text); n > 100 || n < 80 {
		t.Errorf("len(Text) = %d runes, want 80..100", n)
	}
}

func TestExtractPlainTextAndCharset(t *testing.T) {
	// "café" in ISO-8859-1, with a stray control character.
	body := []byte("Caf\xe9 menu\x07\r\nline two\r\n")
	ex, err := extract(body, "text/plain", "text/plain; charset=iso-8859-1", nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Text != "Café menu\nline two" {
		t.Errorf("Text = %q", ex.Text)
	}
}

func TestExtractEmpty(t *testing.T) {
	_, err := extract([]byte("<html><body><script>var x=1</script></body></html>"), "text/html", "text/html", nil, 100)
	if e := (*Error)(nil); !errors.As(err, &e) || e.Reason != ReasonEmpty {
		t.Fatalf("err = %v, want ReasonEmpty", err)
	}
}

func FuzzExtract(f *testing.F) {
	if b, err := os.ReadFile("../extract/testdata/article.html"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"", "<html>", "<p>hello</p>", "\x00\xff\xfe<title>x</title>",
		`<html><head><meta charset="shift_jis"><link rel="canonical" href="javascript:alert(1)"></head><body><article><p>` + strings.Repeat("word ", 400) + `</p></article></body></html>`,
		"<table><tr><td><table><tr><td>" + strings.Repeat("<div>", 500),
	} {
		f.Add([]byte(s))
	}
	base := &url.URL{Scheme: "https", Host: "fuzz.test", Path: "/p"}
	const maxRunes = 300
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		start := time.Now()
		ex, err := extract(data, "text/html", "text/html", base, maxRunes)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("extract took %v on %d bytes", d, len(data))
		}
		if err != nil {
			if e := (*Error)(nil); !errors.As(err, &e) || e.Reason != ReasonEmpty {
				t.Fatalf("unexpected error %T %v", err, err)
			}
			return
		}
		if n := utf8.RuneCountInString(ex.Text); n > maxRunes {
			t.Fatalf("Text has %d runes > %d", n, maxRunes)
		}
		if !utf8.ValidString(ex.Text) || !utf8.ValidString(ex.Title) || !utf8.ValidString(ex.Author) {
			t.Fatal("invalid UTF-8 in output")
		}
		if strings.TrimSpace(ex.Text) == "" {
			t.Fatal("success with empty text")
		}
		if ex.CanonicalURL != "" && !strings.HasPrefix(ex.CanonicalURL, "http") {
			t.Fatalf("CanonicalURL %q is not http(s)", ex.CanonicalURL)
		}
	})
}

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"http://2130706433/", "http://0x7f.1/", "https://example.com:8443/a?b#c", "http://[::ffff:127.0.0.1]/", "http://1.2.3.4.5/", "http://09.1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if normalizeURL(u) != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if u.Hostname() == "" || u.User != nil {
			t.Fatalf("accepted %q", u)
		}
		// A host that survives normalisation is a canonical IP or a name
		// that does not end in a number.
		if strings.Contains(u.Host, "[") {
			return // IPv6 literal, judged by the guard as written
		}
		if _, isNum, _ := parseLegacyIPv4(u.Hostname()); isNum {
			if a, err := netip.ParseAddr(u.Hostname()); err != nil || !a.Is4() {
				t.Fatalf("numeric host %q left non-canonical", u.Hostname())
			}
		}
	})
}
