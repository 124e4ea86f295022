package pipeline

import (
	"strings"
	"testing"
)

func TestDiffDraftsListsSectionsClaimsAndAddressedItems(t *testing.T) {
	r := fixtureRun()
	prev := checkedDraft()
	prev.Sections = append(prev.Sections, Section{Title: "Outlook", Content: "More data is coming."})
	next := fixtureDraft()
	next.Version = 2
	next.Sections[1].Content = "Typical installed cost ranged from 9,000 to 15,000 EUR, by installer survey [2]." // edited
	next.Sections[0].Content = "A 40-home study measured a seasonal COP of 2.8 at -15 °C, well above resistance heating [1]."
	next.Sections = append(next.Sections, Section{Title: "Noise", Content: "Outdoor units are quiet."})
	next.Conclusion = "They work [1]." // drops the unsupported claims of the conclusion
	next.Claims = VerifyClaims(next, []ClaimOutput{
		{Sentence: next.Sections[0].Content, SourceID: 1, Quote: "Measured seasonal COP was 2.8 at -15 °C across 40 homes"},
		{Sentence: next.Sections[1].Content, SourceID: 2, Quote: "Typical installed cost ranged from 9,000 to 15,000 EUR"},
		{Sentence: "Heat pumps keep working in the cold [1] and cost a known amount [2].", SourceID: 1, Quote: "Measured seasonal COP was 2.8 at -15 °C"},
		{Sentence: "Heat pumps keep working in the cold [1] and cost a known amount [2].", SourceID: 2, Quote: "Typical installed cost ranged from 9,000 to 15,000 EUR"},
		{Sentence: "They work [1].", SourceID: 1, Quote: "Measured seasonal COP was 2.8 at -15 °C"},
	}, r.Pages)
	r.Critiques = []Critique{
		{DraftVersion: 1, Score: 6, Items: []CritiqueItem{
			{Severity: "minor", Category: "style", Location: "Costs", Description: "Say where the figure comes from."},
			{Severity: "major", Category: "citation", Location: "Conclusion", Description: "Unsupported claim."},
		}},
		{DraftVersion: 1, Human: "Add a word on noise.", By: "U1"},
	}
	items := revisionItems(r, 1)
	if len(items) != 3 || items[0].Severity != "major" || items[2].By != "U1" || items[2].N != 3 {
		t.Fatalf("revision items %+v: want the major first, the person's last, numbered 1–3", items)
	}
	diff := DiffDrafts(prev, next, items, []int{1, 3})

	changed := map[string]SectionChange{}
	for _, c := range diff.Changed {
		changed[c.Title] = c
	}
	if c := changed["Efficiency in the cold"]; !c.Rewritten || c.Share < rewrittenShare {
		t.Errorf("the efficiency section was rewritten: %+v", c)
	}
	if c, ok := changed["Costs"]; !ok || c.Rewritten {
		t.Errorf("the costs section was edited, not rewritten: %+v (%v)", c, ok)
	}
	if _, ok := changed["Abstract"]; ok {
		t.Errorf("the abstract did not change: %+v", diff.Changed)
	}
	if strings.Join(diff.Added, ",") != "Noise" || strings.Join(diff.Removed, ",") != "Outlook" {
		t.Errorf("added %v removed %v", diff.Added, diff.Removed)
	}
	if len(diff.ClaimsDropped) != 3 || len(diff.ClaimsAdded) != 3 {
		t.Errorf("claims added %q dropped %q", diff.ClaimsAdded, diff.ClaimsDropped)
	}
	if diff.UnsupportedFixed != 3 || diff.UnsupportedLeft != 0 {
		t.Errorf("unsupported fixed %d left %d, want 3 and 0", diff.UnsupportedFixed, diff.UnsupportedLeft)
	}
	if len(diff.Addressed) != 2 || len(diff.Open) != 1 || diff.Open[0].Location != "Costs" {
		t.Errorf("addressed %+v open %+v", diff.Addressed, diff.Open)
	}
	for _, want := range []string{"rewrote Efficiency in the cold", "edited ", "Costs", "added Noise", "removed Outlook", "3 of 3 unsupported claims fixed or dropped", "addressed 2 of 3 critique items"} {
		if !strings.Contains(diff.Summary(), want) {
			t.Errorf("summary %q lacks %q", diff.Summary(), want)
		}
	}
	if s := DiffDrafts(prev, prev, nil, nil).Summary(); s != "no section changed · 0 of 3 unsupported claims fixed or dropped" {
		t.Errorf("identical drafts: %q", s)
	}
}
