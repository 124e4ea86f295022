package pipeline

import (
	"strings"
	"testing"
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
