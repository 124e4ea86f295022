package pipeline

import (
	"strings"
	"testing"
)

func TestPromptPagesKeepTheBestWithinTheTokenBudget(t *testing.T) {
	r := &Run{Limits: Limits{MaxSourceChars: 6000, MaxSourceTokens: 2500}}
	for id := 1; id <= 5; id++ {
		r.Sources = append(r.Sources, Source{ID: id, Score: float64(id) / 10})         // 5 is best
		r.Pages = append(r.Pages, Page{SourceID: id, Text: strings.Repeat("x", 4000)}) // ~1000 tokens each
	}
	r.Sources[0].Relevant = true // a person marked source 1: it goes first
	pages := r.promptPages()
	if len(pages) != 2 || pages[0].SourceID != 1 || pages[1].SourceID != 5 {
		var ids []int
		for _, p := range pages {
			ids = append(ids, p.SourceID)
		}
		t.Fatalf("pages %v, want [1 5] (the marked one, then the best, within 2500 tokens)", ids)
	}
	r.noteLeftOut(len(pages))
	if len(r.Bounds) != 1 || !strings.Contains(r.Bounds[0], "3 of 5 pages read were left out") {
		t.Fatalf("bounds %v", r.Bounds)
	}

	// Two pages always go, however small the budget.
	r.Limits.MaxSourceTokens = 10
	if n := len(r.promptPages()); n != 2 {
		t.Fatalf("%d pages with a tiny budget, want 2", n)
	}
}

func TestHopelessDraftsAreRejectedNotRevised(t *testing.T) {
	cases := []struct {
		score, potential float64
		canIterate       bool
		want             string
	}{
		{4.0, 0.1, true, RecommendReject},  // low score, nothing to gain: stop paying
		{4.0, 0.5, true, RecommendRevise},  // low score, but revision can help
		{6.0, 0.0, true, RecommendRevise},  // acceptable score: revise as the seed says
		{8.0, 0.0, true, RecommendApprove}, // passes
		{4.0, 0.9, false, RecommendReject}, // no iterations left
	}
	for _, c := range cases {
		if got := RecommendWithPotential(c.score, nil, c.canIterate, c.potential); got != c.want {
			t.Errorf("score %.1f potential %.1f canIterate %v: %s, want %s", c.score, c.potential, c.canIterate, got, c.want)
		}
	}
}
