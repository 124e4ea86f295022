package pipeline

import (
	"math"
	"testing"
)

func TestReportReviewCriteria(t *testing.T) {
	cs := ReviewCriteria()
	want := map[string]float64{"accuracy": .25, "completeness": .20, "coherence": .20, "citation": .15, "methodology": .10, "style": .10}
	if len(cs) != len(want) {
		t.Fatalf("got %d criteria, want %d", len(cs), len(want))
	}
	sum := 0.0
	for _, c := range cs {
		if w, ok := want[c.Name]; !ok || w != c.Weight {
			t.Errorf("criterion %s weight %v, want %v", c.Name, c.Weight, want[c.Name])
		}
		if c.Description == "" || len(c.Checks) < 4 {
			t.Errorf("criterion %s lacks a description or its (at least four) checks", c.Name)
		}
		sum += c.Weight
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("weights sum to %v, want 1", sum)
	}
	cs[0].Checks[0] = "mutated"
	if ReviewCriteria()[0].Checks[0] == "mutated" {
		t.Error("ReviewCriteria shares state between calls")
	}
}

func allScores(v float64) []CriterionScore {
	var out []CriterionScore
	for _, c := range ReviewCriteria() {
		out = append(out, CriterionScore{Name: c.Name, Score: v})
	}
	return out
}

func TestReportWeightedScore(t *testing.T) {
	cases := []struct {
		name   string
		scores []CriterionScore
		want   float64
	}{
		{"all ten", allScores(10), 10},
		{"all zero", allScores(0), 0},
		{"all seven", allScores(7), 7},
		{"none", nil, 0},
		{"accuracy only", []CriterionScore{{Name: "accuracy", Score: 8}}, 2},
		{"case and spaces", []CriterionScore{{Name: " Accuracy ", Score: 8}, {Name: "STYLE", Score: 10}}, 3},
		{"unknown ignored", append(allScores(5), CriterionScore{Name: "vibes", Score: 10}), 5},
		{"duplicate counts once", []CriterionScore{{Name: "citation", Score: 10}, {Name: "citation", Score: 0}}, 1.5},
		{"clamped above", allScores(15), 10},
		{"clamped below", allScores(-3), 0},
		{"mixed", []CriterionScore{{Name: "accuracy", Score: 9}, {Name: "completeness", Score: 8}, {Name: "coherence", Score: 7}, {Name: "citation", Score: 6}, {Name: "methodology", Score: 5}, {Name: "style", Score: 4}}, 0.25*9 + 0.2*8 + 0.2*7 + 0.15*6 + 0.1*5 + 0.1*4},
	}
	for _, c := range cases {
		if got := WeightedScore(c.scores); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: WeightedScore = %v, want %v", c.name, got, c.want)
		}
	}
}

func critiqueItems(critical, major, minor int) []CritiqueItem {
	var out []CritiqueItem
	for range critical {
		out = append(out, CritiqueItem{Severity: "critical"})
	}
	for range major {
		out = append(out, CritiqueItem{Severity: "Major"})
	}
	for range minor {
		out = append(out, CritiqueItem{Severity: "minor"})
	}
	return out
}

func TestReportRecommend(t *testing.T) {
	cases := []struct {
		score      float64
		items      []CritiqueItem
		canIterate bool
		want       string
	}{
		{7.5, nil, false, RecommendApprove},                                   // at the pass threshold
		{7.5, critiqueItems(0, 3, 9), false, RecommendApprove},                // 3 major is still fine
		{10, critiqueItems(0, 4, 0), false, RecommendRevise},                  // 4 major blocks approval
		{10, critiqueItems(0, 4, 0), true, RecommendRevise},                   //
		{9, critiqueItems(1, 0, 0), false, RecommendRevise},                   // any critical blocks approval
		{7.49, nil, false, RecommendRevise},                                   // just under the pass threshold
		{7.49, nil, true, RecommendRevise},                                    //
		{5.0, nil, false, RecommendRevise},                                    // at the revision threshold
		{4.99, nil, false, RecommendReject},                                   // under it with no iteration left
		{4.99, nil, true, RecommendRevise},                                    // under it, but an iteration is left
		{0, critiqueItems(3, 5, 0), true, RecommendRevise},                    //
		{0, critiqueItems(3, 5, 0), false, RecommendReject},                   //
		{4.99, critiqueItems(0, 0, 0), false, RecommendReject},                //
		{8, []CritiqueItem{{Severity: " CRITICAL "}}, false, RecommendRevise}, // severities are case-insensitive
	}
	for _, c := range cases {
		if got := Recommend(c.score, c.items, c.canIterate); got != c.want {
			t.Errorf("Recommend(%v, %d items, %v) = %s, want %s", c.score, len(c.items), c.canIterate, got, c.want)
		}
	}
}
