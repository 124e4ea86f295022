package search

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/dedup"
)

// FuzzMerge feeds arbitrary URLs and text through the merge step: it never
// panics, keeps no two results with the same normalised URL, and keeps only
// http(s) URLs.
func FuzzMerge(f *testing.F) {
	f.Add("https://arxiv.org/abs/2101.00001v2", "https://doi.org/10.48550/arXiv.2101.00001", "title words", "10.1000/x")
	f.Add("https://example.com/a?utm_source=x", "https://EXAMPLE.com/a/", "", "")
	f.Add("ftp://x", "", "t", "doi:")
	f.Fuzz(func(t *testing.T, u1, u2, text, doi string) {
		lists := [][]Result{
			{{URL: u1, Title: text, DOI: doi}, {URL: u2, Snippet: text}},
			{{URL: u2, Title: text}, {URL: u1, DOI: doi, Snippet: strings.Repeat(text+" ", 3)}},
		}
		out := merge(lists, testNow)
		seen := map[string]bool{}
		for _, r := range out {
			key, err := dedup.NormalizeURL(r.URL)
			if err != nil {
				t.Fatalf("kept a URL that does not normalise: %q", r.URL)
			}
			if seen[key] {
				t.Fatalf("duplicate URL %q kept", key)
			}
			seen[key] = true
		}
		if len(out) > 2 {
			t.Fatalf("%d results from two distinct URLs", len(out))
		}
	})
}
