package dedup

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"HTTP://Example.COM/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"https://example.com:80/a", "https://example.com:80/a"},
		{"https://example.com/a#section-2", "https://example.com/a"},
		{"https://example.com/a/", "https://example.com/a"},
		{"https://example.com", "https://example.com/"},
		{"https://example.com/", "https://example.com/"},
		{"https://example.com./x", "https://example.com/x"},
		{"https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"https://example.com//a//b", "https://example.com/a/b"},
		{"https://example.com/a%2fb", "https://example.com/a%2Fb"},
		{"https://example.com/p?b=2&a=1", "https://example.com/p?a=1&b=2"},
		{"https://example.com/p?utm_source=x&utm_medium=y&id=7&UTM_Campaign=z", "https://example.com/p?id=7"},
		{"https://example.com/p?gclid=1&fbclid=2&ref=hn&msclkid=3&q=go", "https://example.com/p?q=go"},
		{"https://example.com/p?utm_source=x", "https://example.com/p"},
		{"https://example.com/p?&&a=1&", "https://example.com/p?a=1"},
		{"https://example.com/p?q=a+b&q=%c3%a9", "https://example.com/p?q=%C3%A9&q=a+b"},
		{"  https://example.com/x  ", "https://example.com/x"},
		{"https://[2001:DB8::1]:443/x", "https://[2001:db8::1]/x"},
		{"https://user:secret@example.com/x", "https://example.com/x"},
	}
	for _, tt := range tests {
		got, err := NormalizeURL(tt.in)
		if err != nil {
			t.Errorf("NormalizeURL(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeURLRejects(t *testing.T) {
	for _, in := range []string{"", "example.com/a", "/relative/path", "ftp://example.com/x", "mailto:a@b.c", "http:opaque", "https://", "http://%zz/"} {
		if got, err := NormalizeURL(in); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want error", in, got)
		}
	}
	_, err := NormalizeURL("ftp://example.com")
	if !errors.Is(err, ErrUnsupportedURL) {
		t.Errorf("error %v does not wrap ErrUnsupportedURL", err)
	}
}

func TestIdentifiers(t *testing.T) {
	tests := []struct{ in, doi, arxiv string }{
		{"https://doi.org/10.1000/XYZ123", "10.1000/xyz123", ""},
		{"http://dx.doi.org/10.1038/nphys1170", "10.1038/nphys1170", ""},
		{"doi.org/10.1126/science.169.3946.635", "10.1126/science.169.3946.635", ""},
		{"https://doi.org/10.1002/%28SICI%291097-4571", "10.1002/(sici)1097-4571", ""},
		{"https://dl.acm.org/doi/10.1145/3292500.3330701", "10.1145/3292500.3330701", ""},
		{"https://onlinelibrary.wiley.com/doi/abs/10.1002/asi.24750", "10.1002/asi.24750", ""},
		{"https://arxiv.org/abs/2101.00001v2", "", "2101.00001"},
		{"https://arxiv.org/abs/2101.00001", "", "2101.00001"},
		{"http://arxiv.org/pdf/2305.12345v1.pdf", "", "2305.12345"},
		{"https://arxiv.org/pdf/2305.12345v1", "", "2305.12345"},
		{"https://export.arxiv.org/abs/hep-th/9901001v3", "", "hep-th/9901001"},
		{"https://arxiv.org/abs/math.GT/0309136", "", "math.GT/0309136"},
		{"https://www.arxiv.org/html/2402.01234v2/", "", "2402.01234"},
		{"https://doi.org/10.48550/arXiv.2101.00001", "10.48550/arxiv.2101.00001", "2101.00001"},
		{"https://example.com/article/42", "", ""},
		{"https://arxiv.org/list/cs.AI/recent", "", ""},
		{"https://doi.org/not-a-doi", "", ""},
		{"::not a url", "", ""},
	}
	for _, tt := range tests {
		doi, arxiv := Identifiers(tt.in)
		if doi != tt.doi || arxiv != tt.arxiv {
			t.Errorf("Identifiers(%q) = (%q, %q), want (%q, %q)", tt.in, doi, arxiv, tt.doi, tt.arxiv)
		}
	}
}

func TestNormalizeIdentifiers(t *testing.T) {
	doiTests := map[string]string{
		"10.1000/ABC":                 "10.1000/abc",
		"doi:10.1000/abc.":            "10.1000/abc",
		"https://doi.org/10.1000/abc": "10.1000/abc",
		"HTTPS://DOI.ORG/10.1000/abc": "10.1000/abc",
		"https://openalex.org/W123":   "",
		"":                            "",
	}
	for in, want := range doiTests {
		if got := NormalizeDOI(in); got != want {
			t.Errorf("NormalizeDOI(%q) = %q, want %q", in, got, want)
		}
	}
	arxivTests := map[string]string{
		"arXiv:2101.00001v2": "2101.00001",
		"2101.00001":         "2101.00001",
		"0704.0001v1":        "0704.0001",
		"hep-th/9901001v1":   "hep-th/9901001",
		"W123":               "",
		"2101.001":           "",
	}
	for in, want := range arxivTests {
		if got := NormalizeArxivID(in); got != want {
			t.Errorf("NormalizeArxivID(%q) = %q, want %q", in, got, want)
		}
	}
}

const article = `Large language models have shown remarkable capabilities in a wide range of natural
language processing tasks, including question answering, summarisation and code generation.
In this article we survey retrieval augmented generation, a family of techniques that ground the
output of a model in documents retrieved from an external corpus at inference time, and we
discuss the trade-offs between retrieval quality, latency and the faithfulness of the answers.`

func TestSimhashNearDuplicates(t *testing.T) {
	base := Simhash(article)
	if base == 0 {
		t.Fatal("Simhash of an article is 0")
	}
	if Simhash(article) != base {
		t.Fatal("Simhash is not deterministic")
	}
	// Same text with different case, punctuation and whitespace: same words.
	reformatted := strings.ToUpper(strings.ReplaceAll(article, ",", " ;"))
	if got := Simhash(reformatted); got != base {
		t.Errorf("reformatted text: fingerprint %x differs from %x", got, base)
	}
	// A page-length text republished with a site's boilerplate appended and
	// one word changed: near duplicate.
	long := pseudoText(1, 1200)
	syndicated := strings.Replace(long, " ", " extra ", 1) + " Read more at Example News."
	if d := hamming(Simhash(long), Simhash(syndicated)); d > MaxHammingDistance {
		t.Errorf("syndicated copy not a near duplicate (distance %d)", d)
	}
	if d := hamming(Simhash(long), Simhash(pseudoText(2, 1200))); d <= MaxHammingDistance {
		t.Errorf("unrelated pages reported as near duplicates (distance %d)", d)
	}
	other := `The city council approved the new budget on Tuesday after a long debate about
public transport, housing and the maintenance of parks, with the final vote split along party lines
and several amendments about cycling infrastructure rejected late in the evening session.`
	if NearDuplicate(base, Simhash(other)) {
		t.Errorf("unrelated texts reported as near duplicates (distance %d)", hamming(base, Simhash(other)))
	}
	if Simhash("") != 0 || Simhash(" ,.; ") != 0 {
		t.Error("text without words should have fingerprint 0")
	}
	if Simhash("two words") == 0 {
		t.Error("short text should still have a fingerprint")
	}
}

func TestNearDuplicateThreshold(t *testing.T) {
	var a uint64 = 0xF0F0_F0F0_F0F0_F0F0
	if !NearDuplicate(a, a^0b111) {
		t.Error("distance 3 should be a near duplicate")
	}
	if NearDuplicate(a, a^0b1111) {
		t.Error("distance 4 should not be a near duplicate")
	}
}

// pseudoText returns n words drawn deterministically from a small vocabulary.
func pseudoText(seed uint64, n int) string {
	vocab := strings.Fields("model data search result paper method network learning training corpus " +
		"query answer retrieval evaluation benchmark graph language vision agent policy reward " +
		"system latency memory cache index token embedding vector score rank metric error")
	r := rand.New(rand.NewPCG(seed, seed))
	words := make([]string, n)
	for i := range words {
		words[i] = vocab[r.IntN(len(vocab))]
	}
	return strings.Join(words, " ")
}

func hamming(a, b uint64) int {
	n := 0
	for x := a ^ b; x != 0; x &= x - 1 {
		n++
	}
	return n
}
