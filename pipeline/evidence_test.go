package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"
)

func TestSentenceSpansKeepAbbreviationsAndTrailingMarkers(t *testing.T) {
	text := "Heat pumps work, e.g. in Norway [1]. The U.S. grid copes. A claim. [2] Next one!\n- a list item [3]"
	var got []string
	for _, sp := range sentenceSpans(text) {
		got = append(got, strings.TrimSpace(text[sp[0]:sp[1]]))
	}
	want := []string{"Heat pumps work, e.g. in Norway [1].", "The U.S. grid copes.", "A claim. [2]", "Next one!", "- a list item [3]"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sentences\n%q\nwant\n%q", got, want)
	}
}

func TestVerifyClaimsStatesEveryCitedClaim(t *testing.T) {
	r := fixtureRun()
	claims := VerifyClaims(fixtureDraft(), fixtureQuotes(), r.Pages)
	type row struct {
		location string
		source   int
		status   string
		reason   string
	}
	want := []row{
		{"Abstract", 1, ClaimVerified, ""},
		{"Abstract", 2, ClaimUnsupported, "no supporting quote was given"},
		{"Efficiency in the cold", 1, ClaimVerified, ""}, // fuzzy: one word off, within the threshold
		{"Costs", 2, ClaimVerified, ""},                  // "costs" for "cost", commas in numbers
		{"Conclusion", 1, ClaimUnsupported, "from another source the run read (source 2)"},
		{"Conclusion", 2, ClaimUnsupported, "not found in the cited source"},
	}
	if len(claims) != len(want) {
		t.Fatalf("%d claims, want %d: %+v", len(claims), len(want), claims)
	}
	for i, w := range want {
		c := claims[i]
		if c.Location != w.location || c.SourceID != w.source || c.Status != w.status || !strings.Contains(c.Reason, w.reason) {
			t.Errorf("claim %d = %s/%d %s %q, want %s/%d %s %q", i, c.Location, c.SourceID, c.Status, c.Reason, w.location, w.source, w.status, w.reason)
		}
	}
	if got := claims[2]; got.Match < QuoteMatchThreshold || got.Match == 1 || got.Found != "Measured seasonal COP was 2.8 at -15 °C across 40 homes" {
		t.Errorf("fuzzy claim matched %.2f with %q", got.Match, got.Found)
	}
	if tl := TallyClaims(claims); tl != (ClaimTally{Total: 6, Verified: 3, Unsupported: 3}) || tl.String() != "6 claims · 3 verified · 3 unsupported" {
		t.Errorf("tally %+v %q", tl, tl)
	}
}

func TestVerifyClaimsRefusesShortQuotesAndIgnoresStrayOnes(t *testing.T) {
	r := fixtureRun()
	d := Draft{Sections: []Section{{Title: "Efficiency", Content: "The COP was 2.8 [1]. Nothing cited here."}}}
	claims := VerifyClaims(d, []ClaimOutput{
		{Sentence: "The COP was 2.8 [1].", SourceID: 1, Quote: "COP was 2.8"},                                         // too short to mean anything
		{Sentence: "Nothing cited here.", SourceID: 1, Quote: "Measured seasonal COP was 2.8 at -15 °C"},              // the sentence cites nothing
		{Sentence: "A sentence the draft does not have.", SourceID: 1, Quote: "Measured seasonal COP was 2.8 at -15"}, // not in the draft
	}, r.Pages)
	if len(claims) != 1 || claims[0].Status != ClaimUnsupported || !strings.Contains(claims[0].Reason, "too short") {
		t.Fatalf("claims = %+v", claims)
	}
}

func TestRecommendDraftHoldsUnsupportedClaimsWhileRevisionIsPossible(t *testing.T) {
	if got := RecommendDraft(9, nil, true, 0.5, 1); got != RecommendRevise {
		t.Errorf("an unsupported claim with revisions left: %s, want revise", got)
	}
	if got := RecommendDraft(9, nil, false, 0.5, 1); got != RecommendApprove {
		t.Errorf("an unsupported claim at the bound: %s, want approve (listed in the report)", got)
	}
	if got := RecommendDraft(9, nil, true, 0.5, 0); got != RecommendApprove {
		t.Errorf("no unsupported claim: %s, want approve", got)
	}
}

// pdfRun is a run that read one PDF of 42 pages whose text holds pages 6
// to 8 (the reader stopped at its text budget), and one web page.
func pdfRun() *Run {
	p6 := "Page six introduces the survey of municipal heat networks."
	p7 := "On page seven: district heating cut household emissions by 31 percent over a decade."
	p8 := "Page eight lists the cities."
	text := p6 + "\n\n" + p7 + "\n\n" + p8
	starts := make([]int, 8) // pages 1-5 read as empty, at offset 0
	starts[6] = len(p6) + 2
	starts[7] = starts[6] + len(p7) + 2
	return &Run{
		ID: "r-pdf", Question: "Does district heating cut emissions?",
		Plan: &Plan{SubQuestions: []string{"By how much?"}},
		Pages: []Page{
			{SourceID: 1, URL: "https://agency.example.org/report", FinalURL: "https://agency.example.org/report", Title: "Heat networks 2024",
				Text: text, Kind: KindPDF, PageCount: 42, PageStarts: starts},
			{SourceID: 2, URL: "https://news.example.com/heat", FinalURL: "https://news.example.com/heat", Title: "Heat news",
				Text: "A news story says district heating is popular in the north of the country."},
		},
	}
}

func TestVerifiedQuoteOnPDFCitesItsPage(t *testing.T) {
	r := pdfRun()
	d := Draft{Version: 1, Title: "Heat", Sections: []Section{{Title: "Findings",
		Content: "District heating cut household emissions by 31% [1]. It is popular in the north [2]."}}}
	d.Claims = VerifyClaims(d, []ClaimOutput{
		{Sentence: "District heating cut household emissions by 31% [1].", SourceID: 1, Quote: "district heating cut household emissions by 31 percent over a decade"},
		{Sentence: "It is popular in the north [2].", SourceID: 2, Quote: "district heating is popular in the north of the country"},
	}, r.Pages)
	d.ClaimsChecked = true
	if len(d.Claims) != 2 || d.Claims[0].Status != ClaimVerified || d.Claims[0].Page != 7 || d.Claims[1].Status != ClaimVerified || d.Claims[1].Page != 0 {
		t.Fatalf("claims = %+v", d.Claims)
	}
	r.Drafts = []Draft{d}
	rep := BuildReport(r, time.Time{})
	md := rep.Markdown
	for _, want := range []string{
		"[^1]: [1, p. 7] “district heating cut household emissions by 31 percent over a decade”",
		"[^2]: [2] “district heating is popular in the north of the country”",
		"[1] Heat networks 2024 — agency.example.org, PDF, 42 pages <https://agency.example.org/report>",
		"[2] Heat news — news.example.com <https://news.example.com/heat>",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if ref := rep.References[0]; ref.KindText() != "PDF, 42 pages" || rep.References[1].KindText() != "" {
		t.Errorf("references = %+v", rep.References)
	}
}

func TestPageAtAndSourceKind(t *testing.T) {
	p := Page{PageStarts: []int{0, 0, 10, 25}}
	for off, want := range map[int]int{0: 2, 9: 2, 10: 3, 24: 3, 25: 4, 1000: 4} {
		if got := p.pageAt(off); got != want {
			t.Errorf("pageAt(%d) = %d, want %d", off, got, want)
		}
	}
	if got := (Page{}).pageAt(5); got != 0 {
		t.Errorf("a web page's pageAt = %d", got)
	}
	for _, c := range []struct {
		kind  string
		pages int
		want  string
	}{{KindPDF, 42, "PDF, 42 pages"}, {KindPDF, 1, "PDF, 1 page"}, {KindPDF, 0, "PDF"}, {"", 3, ""}} {
		if got := sourceKind(c.kind, c.pages); got != c.want {
			t.Errorf("sourceKind(%q, %d) = %q, want %q", c.kind, c.pages, got, c.want)
		}
	}
}

// pdfFetcher serves every URL as a PDF of 400 pages of which 300 were read.
type pdfFetcher struct{}

func (pdfFetcher) Fetch(_ context.Context, u string) (Document, error) {
	return Document{URL: u, FinalURL: u, Title: "Report", Text: "Page one.\n\nPage two.", Kind: KindPDF,
		PageCount: 400, PageStarts: []int{0, 11}, Note: "more than 300 pages: read the first 300"}, nil
}

func TestFetchKeepsPDFPages(t *testing.T) {
	clock := quartz.NewMock(t)
	clock.Set(time.Unix(0, 0))
	e := &Engine{cfg: Config{Fetcher: pdfFetcher{}, Clock: clock}}
	r := &Run{Sources: []Source{{ID: 1, URL: "https://agency.example.org/report", Selected: true}}}
	if err := e.stepFetch(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(r.Pages) != 1 {
		t.Fatalf("pages = %+v", r.Pages)
	}
	p := r.Pages[0]
	if p.Kind != KindPDF || p.PageCount != 400 || len(p.PageStarts) != 2 || p.pageAt(strings.Index(p.Text, "two")) != 2 {
		t.Errorf("page = %+v", p)
	}
	var traced bool
	for _, tr := range r.Trace {
		traced = traced || strings.Contains(tr.Message, "https://agency.example.org/report: more than 300 pages: read the first 300")
	}
	if !traced {
		t.Errorf("the reading's note is not in the trace: %+v", r.Trace)
	}
}

func TestReportNamesUnreadSourcesAndWhy(t *testing.T) {
	r := pdfRun()
	r.Sources = []Source{
		{ID: 5, URL: "https://agency.example.org/locked.pdf", Selected: true, FetchErr: "fetch https://agency.example.org/locked.pdf: unreadable: encrypted PDF: a password is needed"},
		{ID: 6, URL: "https://agency.example.org/scan.pdf", Selected: true, FetchErr: "fetch https://agency.example.org/scan.pdf: unreadable: no text layer (scanned images?)"},
		{ID: 7, URL: "https://mirror.example.org/report", Selected: true, FetchErr: "near-duplicate of https://agency.example.org/report"},
	}
	for i := range 12 {
		r.Sources = append(r.Sources, Source{ID: 10 + i, URL: fmt.Sprintf("https://slow.example.org/%d", i), FetchErr: "timeout"})
	}
	r.Drafts = []Draft{{Version: 1, Title: "Heat", Sections: []Section{{Title: "Findings", Content: "District heating cuts emissions [1]."}}}}
	md := BuildReport(r, time.Time{}).Markdown
	for _, want := range []string{
		"- Sources that could not be read, and why:\n  - https://agency.example.org/locked.pdf — unreadable: encrypted PDF: a password is needed\n  - https://agency.example.org/scan.pdf — unreadable: no text layer (scanned images?)\n",
		"  - https://slow.example.org/7 — timeout\n  - …and 4 more\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "mirror.example.org") {
		t.Errorf("a near-duplicate is listed as unread:\n%s", md)
	}
}
