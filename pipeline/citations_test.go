package pipeline

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Number is numberDraft without its renumbering function.
func Number(d Draft, pages []Page) (Draft, []Reference) {
	out, refs, _ := numberDraft(d, pages)
	return out, refs
}

func citationPages() []Page {
	return []Page{
		{SourceID: 2, URL: "https://example.org/a", FinalURL: "https://www.example.org/a/", Title: "Page A", Published: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)},
		{SourceID: 5, URL: "http://news.example.com/b?id=7", Title: "Page B"},
		{SourceID: 7, URL: "https://c.example.net/wiki/Foo_(bar)", Title: ""},
	}
}

func TestCitationCheckRemovesUnfetched(t *testing.T) {
	d := Draft{
		Version:  1,
		Title:    "Title",
		Abstract: "Fetched [2] and invented [99]. See [the source](https://evil.example/x) and https://unread.example/y.",
		Sections: []Section{{
			Title:     "One",
			Content:   "Claim [2, 99]. Range [4-6]. Link to [page A](https://example.org/a#frag) stays. Bare https://news.example.com/b?id=7 stays. <https://unread.example/z> goes. Wiki https://c.example.net/wiki/Foo_(bar).",
			Citations: []int{2, 99, 4, 5, 6},
		}},
		Conclusion: "Only [12]. End [5]",
	}
	got, notes := CheckCitations(d, citationPages())

	if want := "Fetched [2] and invented. See the source and."; got.Abstract != want {
		t.Errorf("abstract = %q, want %q", got.Abstract, want)
	}
	wantContent := "Claim [2]. Range [5]. Link to [page A](https://example.org/a#frag) stays. Bare https://news.example.com/b?id=7 stays. goes. Wiki https://c.example.net/wiki/Foo_(bar)."
	if got.Sections[0].Content != wantContent {
		t.Errorf("content = %q\nwant      %q", got.Sections[0].Content, wantContent)
	}
	if !reflect.DeepEqual(got.Sections[0].Citations, []int{2, 5}) {
		t.Errorf("citations = %v, want [2 5]", got.Sections[0].Citations)
	}
	if got.Conclusion != "Only. End [5]" {
		t.Errorf("conclusion = %q", got.Conclusion)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"[99]", "[4]", "[6]", "[12]", "https://evil.example/x", "https://unread.example/y", "https://unread.example/z"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes do not mention %s:\n%s", want, joined)
		}
	}
	if strings.Contains(joined, "example.org/a") || strings.Contains(joined, "[2]") || strings.Contains(joined, "[5]") {
		t.Errorf("notes mention something that was kept:\n%s", joined)
	}
	if strings.Contains(d.Abstract, "invented.") {
		t.Fatal("CheckCitations modified its input")
	}
}

func TestCitationCheckKeepsCleanDraft(t *testing.T) {
	d := Draft{Abstract: "A [2]. B [2-5]? C [5, 7]", Sections: []Section{{Title: "S", Content: "x [7]"}}}
	got, notes := CheckCitations(d, []Page{{SourceID: 2}, {SourceID: 3}, {SourceID: 4}, {SourceID: 5}, {SourceID: 7}})
	if len(notes) != 0 {
		t.Errorf("notes for a clean draft: %v", notes)
	}
	if got.Abstract != d.Abstract {
		t.Errorf("clean abstract changed: %q", got.Abstract)
	}
	if !reflect.DeepEqual(got.Sections[0].Citations, []int{7}) {
		t.Errorf("citations = %v", got.Sections[0].Citations)
	}
}

func TestCitationNoFetchedPagesRemovesEverything(t *testing.T) {
	d := Draft{Abstract: "x [1] y [2, 3] [markdown](https://a.example) https://b.example", Sections: []Section{{Content: "[1]"}}}
	got, notes := CheckCitations(d, nil)
	if strings.ContainsAny(got.Abstract+got.Sections[0].Content, "[]") || strings.Contains(got.Abstract, "http") {
		t.Errorf("citations or links survive with no pages: %q / %q", got.Abstract, got.Sections[0].Content)
	}
	if len(notes) != 6 {
		t.Errorf("got %d notes, want 6: %v", len(notes), notes)
	}
	if got.Sections[0].Citations == nil || len(got.Sections[0].Citations) != 0 {
		t.Errorf("citations should be empty, not %v", got.Sections[0].Citations)
	}
}

func TestCitationNumber(t *testing.T) {
	d := Draft{
		Abstract:   "First cites [7], then [2].",
		Sections:   []Section{{Title: "S1", Content: "Both [2, 7] and [5]."}, {Title: "S2", Content: "Again [7][7]; unknown [9]."}},
		Conclusion: "Done [5-7].",
	}
	got, refs := Number(d, citationPages())
	if got.Abstract != "First cites [1], then [2]." {
		t.Errorf("abstract = %q", got.Abstract)
	}
	if got.Sections[0].Content != "Both [1, 2] and [3]." || got.Sections[1].Content != "Again [1][1]; unknown." {
		t.Errorf("sections = %q / %q", got.Sections[0].Content, got.Sections[1].Content)
	}
	if got.Conclusion != "Done [1, 3]." {
		t.Errorf("conclusion = %q", got.Conclusion)
	}
	if !reflect.DeepEqual(got.Sections[0].Citations, []int{1, 2, 3}) || !reflect.DeepEqual(got.Sections[1].Citations, []int{1}) {
		t.Errorf("section citations = %v / %v", got.Sections[0].Citations, got.Sections[1].Citations)
	}
	want := []Reference{
		{N: 1, SourceID: 7, Title: "c.example.net", URL: "https://c.example.net/wiki/Foo_(bar)", Domain: "c.example.net"},
		{N: 2, SourceID: 2, Title: "Page A", URL: "https://www.example.org/a/", Domain: "example.org", Published: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)},
		{N: 3, SourceID: 5, Title: "Page B", URL: "http://news.example.com/b?id=7", Domain: "news.example.com"},
	}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("references =\n%+v\nwant\n%+v", refs, want)
	}
}

func TestCitationParseMarker(t *testing.T) {
	cases := map[string][]int{
		"3":       {3},
		"1, 4":    {1, 4},
		"2-5":     {2, 3, 4, 5},
		"2–3, 2":  {2, 3},
		"9-2":     {9, 2},
		"1-1000":  {1, 1000},
		"1; 2":    {1, 2},
		" 7 ":     {7},
		"4-5, 10": {4, 5, 10},
	}
	for in, want := range cases {
		if got := parseMarker(in); !reflect.DeepEqual(got, want) {
			t.Errorf("parseMarker(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCitationURLKey(t *testing.T) {
	same := [][2]string{
		{"https://www.Example.org/a/", "http://example.org/a"},
		{"https://example.org:443/a#x", "https://example.org/a"},
		{"www.example.org/a", "https://example.org/a"},
	}
	for _, p := range same {
		if urlKey(p[0]) != urlKey(p[1]) || urlKey(p[0]) == "" {
			t.Errorf("urlKey(%q)=%q and urlKey(%q)=%q should match", p[0], urlKey(p[0]), p[1], urlKey(p[1]))
		}
	}
	for _, p := range [][2]string{{"https://example.org/a?x=1", "https://example.org/a?x=2"}, {"https://example.org/a", "https://example.org/b"}} {
		if urlKey(p[0]) == urlKey(p[1]) {
			t.Errorf("urlKey(%q) and urlKey(%q) should differ", p[0], p[1])
		}
	}
	for _, bad := range []string{"", "javascript:alert(1)", "/relative", "mailto:a@b.c"} {
		if urlKey(bad) != "" {
			t.Errorf("urlKey(%q) = %q, want empty", bad, urlKey(bad))
		}
	}
}

// An MCP server's result is cited like a page, its provenance named.
func TestCitationNamesAnMCPServer(t *testing.T) {
	pages := []Page{{SourceID: 3, URL: "mcp://wiki/adr-7", FinalURL: "mcp://wiki/adr-7", Title: "ADR 7"}}
	d := Draft{Abstract: "Redis holds the state [3]."}
	got, notes := CheckCitations(d, pages)
	if len(notes) != 0 || got.Abstract != d.Abstract {
		t.Fatalf("checked %q, notes %v", got.Abstract, notes)
	}
	_, refs := Number(got, pages)
	want := []Reference{{N: 1, SourceID: 3, Title: "ADR 7", URL: "mcp://wiki/adr-7", Domain: "MCP server wiki"}}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("references %+v, want %+v", refs, want)
	}
	if got := hostDomain("mcp://Notes/x%2Fy"); got != "MCP server notes" {
		t.Errorf("hostDomain = %q", got)
	}
	if got := hostDomain("docs://handbook/manual/toc.pdf#page=5"); got != "internal documents (handbook)" {
		t.Errorf("hostDomain of a collection's document = %q", got)
	}
}
