package dedup

import (
	"strings"
	"testing"
)

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/a/b/?utm_source=x&b=2&a=1#frag",
		"HTTP://EXAMPLE.COM:80/",
		"https://[::1]:443/x",
		"https://user:pass@host.example/p?q=a+b&q=%c3%a9",
		"https://example.com/a/./b/../../c",
		"http://example.com/%7Euser/",
		"https://doi.org/10.1000/xyz",
		"https://arxiv.org/abs/2101.00001v2",
		"http://example.com?",
		"https://example.com/;param?x=1;y=2",
		"",
		"not a url",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n1, err := NormalizeURL(raw)
		if err != nil {
			return
		}
		n2, err := NormalizeURL(n1)
		if err != nil {
			t.Fatalf("NormalizeURL(%q) = %q, which does not normalise: %v", raw, n1, err)
		}
		if n1 != n2 {
			t.Fatalf("not idempotent: %q -> %q -> %q", raw, n1, n2)
		}
		if strings.Contains(n1, "#") {
			t.Fatalf("fragment kept: %q", n1)
		}
	})
}

func FuzzIdentifiers(f *testing.F) {
	for _, s := range []string{
		"https://doi.org/10.1000/xyz", "https://arxiv.org/abs/2101.00001v2",
		"https://dl.acm.org/doi/abs/10.1145/1", "https://doi.org/10.48550/arXiv.2101.00001", "x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		doi, arxiv := Identifiers(raw)
		if doi != "" && NormalizeDOI(doi) != doi {
			t.Fatalf("DOI %q from %q is not canonical", doi, raw)
		}
		if arxiv != "" && NormalizeArxivID(arxiv) != arxiv {
			t.Fatalf("arXiv id %q from %q is not canonical", arxiv, raw)
		}
	})
}

func FuzzSimhash(f *testing.F) {
	f.Add(article)
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		h := Simhash(text)
		if h != Simhash(text) {
			t.Fatal("not deterministic")
		}
		if !NearDuplicate(h, h) {
			t.Fatal("a fingerprint is not a near duplicate of itself")
		}
	})
}
