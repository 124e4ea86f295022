package pipeline

import "testing"

// A grade is held to what the finding cites: no source is a gap, one
// source at most weak, one site at most moderate, strong needs two sites;
// an ungraded finding is graded from its sources but never strong; the
// analyst may always grade lower. Findings recorded before grades read
// their confidence.
func TestGradeFindingIsHeldToItsSources(t *testing.T) {
	sites := map[int]string{1: "a.example", 2: "a.example", 3: "b.example", 4: ""}
	siteOf := func(id int) string { return sites[id] }
	cases := []struct {
		given   string
		ids     []int
		want    string
		lowered bool
	}{
		{"strong", []int{1, 3}, GradeStrong, false},
		{"Strong ", []int{1, 2}, GradeModerate, true}, // one site
		{"strong", []int{1}, GradeWeak, true},
		{"moderate", []int{4}, GradeWeak, true},
		{"weak", nil, GradeGap, true},
		{"gap", []int{1, 3}, GradeGap, false}, // the analyst may grade lower
		{"weak", []int{1, 3}, GradeWeak, false},
		{"", []int{1, 3}, GradeModerate, false}, // ungraded: never strong
		{"certain", []int{1}, GradeWeak, false},
		{"", nil, GradeGap, false},
		{"high", []int{3, 4}, GradeStrong, false}, // a file is its own site
		{"medium", []int{1}, GradeWeak, true},
	}
	for _, c := range cases {
		got, lowered := gradeFinding(c.given, c.ids, siteOf)
		if got != c.want || lowered != c.lowered {
			t.Errorf("gradeFinding(%q, %v) = %s, %v; want %s, %v", c.given, c.ids, got, lowered, c.want, c.lowered)
		}
	}
	if g := GradeOf(Finding{Confidence: "medium"}); g != GradeModerate {
		t.Errorf("a finding recorded before grades reads %q, want moderate", g)
	}
	a := &Analysis{Findings: []Finding{{Grade: GradeWeak}, {Grade: GradeGap}, {Grade: GradeStrong}, {Grade: GradeWeak}, {}}}
	if got := GradeCounts(a); got != "1 strong, 2 weak, 1 gap" {
		t.Errorf("GradeCounts = %q", got)
	}
}
