package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

func TestDomainRulesNormalize(t *testing.T) {
	got, err := pipeline.DomainRules{
		Only:  []string{" Example.ORG ", "https://docs.example.net/path?q=1", "*.gov.uk", "example.org."},
		Never: []string{".Spam.Example"},
	}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	want := pipeline.DomainRules{Only: []string{"example.org", "docs.example.net", "gov.uk"}, Never: []string{"spam.example"}}
	if !slices.Equal(got.Only, want.Only) || !slices.Equal(got.Never, want.Never) {
		t.Errorf("normalised %+v, want %+v", got, want)
	}
	if s := got.String(); s != "only example.org, docs.example.net, gov.uk · never spam.example" {
		t.Errorf("String() = %q", s)
	}
}

func TestDomainRulesNormalizeNamesEveryBadEntry(t *testing.T) {
	many := make([]string, pipeline.MaxDomainRules+1)
	for i := range many {
		many[i] = "d" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + ".example"
	}
	cases := []struct {
		rules pipeline.DomainRules
		want  []string
	}{
		{pipeline.DomainRules{Only: []string{"exa mple.org"}}, []string{`only domain "exa mple.org"`, "character ' '"}},
		{pipeline.DomainRules{Never: []string{"-bad.example", "good.example", ""}}, []string{`never domain "-bad.example"`, "hyphen", `never domain ""`, "empty"}},
		{pipeline.DomainRules{Only: []string{"a..b"}}, []string{`only domain "a..b"`}},
		{pipeline.DomainRules{Only: []string{"x.org"}, Never: []string{"X.org"}}, []string{`"x.org" is in both`}},
		{pipeline.DomainRules{Never: many}, []string{"51 never domains: at most 50"}},
	}
	for _, c := range cases {
		_, err := c.rules.Normalize()
		if err == nil {
			t.Errorf("%+v: no error", c.rules)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q does not say %q", c.rules, err, w)
			}
		}
		if strings.Contains(err.Error(), "good.example") {
			t.Errorf("error %q names a good entry", err)
		}
	}
	err := pipeline.ValidateRequest(pipeline.Request{Question: "How well do heat pumps work in cold climates?", Domains: pipeline.DomainRules{Never: []string{"bad_domain"}}})
	if err == nil || !strings.Contains(err.Error(), `never domain "bad_domain"`) {
		t.Errorf("ValidateRequest: %v, want the bad entry named", err)
	}
}

func TestDomainRulesRefusal(t *testing.T) {
	d := pipeline.DomainRules{Only: []string{"example.org"}, Never: []string{"bad.example.org"}}
	for host, want := range map[string]string{
		"example.org":          "",
		"WWW.Example.org.":     "",
		"example.org:8443":     "",
		"notexample.org":       "excluded by the run's domain rules (not in only example.org)",
		"bad.example.org":      "excluded by the run's domain rules (never bad.example.org)",
		"deep.bad.example.org": "excluded by the run's domain rules (never bad.example.org)",
	} {
		if got := d.Refusal(host); got != want {
			t.Errorf("Refusal(%q) = %q, want %q", host, got, want)
		}
	}
	if got := d.RefusalOfURL("mcp://wiki/page-1"); got != "" {
		t.Errorf("an MCP address is refused: %q", got)
	}
	if got := d.RefusalOfURL("https:///nohost"); got == "" {
		t.Error("a web URL without a host is not refused")
	}
	if got := (pipeline.DomainRules{}).RefusalOfURL("https://anything.example"); got != "" {
		t.Errorf("empty rules refuse: %q", got)
	}
}

// domainWeb returns results from allowed, never-listed and other domains;
// its Fetch records what it was asked and the rules its context carried,
// and serves /moved as a page that ended on a never-listed host (a fetcher
// that does not check redirects itself).
type domainWeb struct {
	mu      sync.Mutex
	fetched []string
	rules   []pipeline.DomainRules
}

func (w *domainWeb) Search(context.Context, pipeline.SearchRequest) pipeline.SearchOutcome {
	var hits []pipeline.Hit
	for _, u := range []string{"https://example.org/a", "https://www.example.org/b", "https://bad.example.org/c", "https://other.net/d", "https://example.org/moved"} {
		hits = append(hits, pipeline.Hit{URL: u, Title: u, Snippet: "heat pumps", Heuristic: 0.5})
	}
	return pipeline.SearchOutcome{Hits: hits}
}

func (w *domainWeb) Fetch(ctx context.Context, u string) (pipeline.Document, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fetched = append(w.fetched, u)
	rules, _ := pipeline.DomainRulesFrom(ctx)
	w.rules = append(w.rules, rules)
	final := u
	if strings.HasSuffix(u, "/moved") {
		final = "https://bad.example.org/landing"
	}
	return pipeline.Document{URL: u, FinalURL: final, Title: u, Text: "Heat pumps keep working in the cold, says " + u + "."}, nil
}

// TestDomainRulesApplyToResultsAndFetches: results from a never-listed or
// not-allowed domain never become candidates and are never fetched; they
// are listed in the report with their reason; every fetch carries the
// rules (for redirects), and a page that ended on a refused host is not
// used.
func TestDomainRulesApplyToResultsAndFetches(t *testing.T) {
	w := &domainWeb{}
	m := &scripted{reviews: []pipeline.CritiqueOutput{passes}}
	r := runAuto(t, m, w, func(req *pipeline.Request) {
		req.Domains = pipeline.DomainRules{Only: []string{"Example.org"}, Never: []string{"bad.example.org"}}
	})
	if got := r.Domains.String(); got != "only example.org · never bad.example.org" {
		t.Errorf("stored rules %q", got)
	}
	for _, u := range w.fetched {
		if strings.Contains(u, "bad.example.org") || strings.Contains(u, "other.net") {
			t.Errorf("fetched %s, which the rules exclude", u)
		}
	}
	if !slices.Contains(w.fetched, "https://example.org/a") {
		t.Errorf("fetched %q, want the allowed pages", w.fetched)
	}
	for _, rules := range w.rules {
		if rules.String() != r.Domains.String() {
			t.Errorf("a fetch carried rules %q, want the run's", rules)
		}
	}
	reasons := map[string]string{}
	for _, s := range r.Sources {
		reasons[s.URL] = s.FetchErr
	}
	if got := reasons["https://bad.example.org/c"]; got != "excluded by the run's domain rules (never bad.example.org)" {
		t.Errorf("never-listed result: %q", got)
	}
	if got := reasons["https://other.net/d"]; got != "excluded by the run's domain rules (not in only example.org)" {
		t.Errorf("not-allowed result: %q", got)
	}
	if got := reasons["https://example.org/moved"]; got != "redirected to https://bad.example.org/landing: excluded by the run's domain rules (never bad.example.org)" {
		t.Errorf("redirected page: %q", got)
	}
	for _, p := range r.Pages {
		if p.URL == "https://example.org/moved" {
			t.Error("the page that ended on a never-listed host was used")
		}
	}
	if r.Report == nil {
		t.Fatal("no report")
	}
	unread := strings.Join(r.Report.Provenance.Unread, "\n")
	for _, want := range []string{"https://bad.example.org/c — excluded by the run's domain rules", "https://other.net/d — excluded by the run's domain rules"} {
		if !strings.Contains(unread, want) {
			t.Errorf("the report's unread sources do not list %q:\n%s", want, unread)
		}
	}
	if !slices.ContainsFunc(r.Trace, func(e pipeline.TraceEntry) bool {
		return strings.Contains(e.Message, "2 results excluded by the run's domain rules (only example.org · never bad.example.org)")
	}) {
		t.Errorf("the trace does not count the excluded results")
	}
}
