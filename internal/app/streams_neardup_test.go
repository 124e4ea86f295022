package app

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// nearDupRe reads the fetch step's trace line.
var nearDupRe = regexp.MustCompile(`\((\d+) near-duplicates left out\)`)

// TestStreamDigestLeavesOutNearDuplicatesOfEarlierDigests: a page reported by
// one digest reappears in the next one's searches at another address (the same
// text, syndicated): the pipeline reads it, recognises its fingerprint from
// the stream's Known and leaves it out of the second digest.
func TestStreamDigestLeavesOutNearDuplicatesOfEarlierDigests(t *testing.T) {
	all := researchtest.DefaultPages()
	for i := range all {
		all[i].Published = time.Time{} // undated: only the stream's memory can tell old from new
	}
	first := []researchtest.Page{all[0], all[1]}
	h := newStreamHarness(t, first)
	ctx := context.Background()

	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	h.clock.Set(day.Add(time.Hour))
	spec := dailySpec("Copies")
	if _, err := h.svc.Create(ctx, spec, "UOWNER"); err != nil {
		t.Fatal(err)
	}

	h.tickAt(day.Add(9*time.Hour + time.Minute))
	r1 := h.finished()
	if r1.Status != pipeline.StatusCompleted || !slices.Contains(refURLs(r1), h.web.PageURL(0)) {
		t.Fatalf("digest 1: %s citing %v", r1.Status, refURLs(r1))
	}
	if s1 := h.stream("Copies"); len(s1.Known.Simhashes) == 0 {
		t.Fatal("digest 1 left no fingerprints in Known")
	}

	// Digest 2: page 0 is also published, word for word, at a new address
	// (page 3); page 2 is really new.
	h.web.SetPages([]researchtest.Page{all[0], all[1], all[4], all[0]})
	copyURL := h.web.PageURL(3)
	h.tickAt(day.Add(33*time.Hour + time.Minute))
	r2 := h.finished()
	if r2.Status != pipeline.StatusCompleted {
		t.Fatalf("digest 2: %s (%s %s)", r2.Status, r2.FallbackReason, r2.Failure)
	}
	for _, u := range refURLs(r2) {
		if u == copyURL || u == h.web.PageURL(0) {
			t.Errorf("digest 2 cites %s, a copy of what digest 1 reported", u)
		}
	}
	for _, p := range r2.Pages {
		if p.URL == copyURL {
			t.Errorf("digest 2 kept the copy %s among its pages", p.URL)
		}
	}
	dups := 0
	for _, e := range r2.Trace {
		if m := nearDupRe.FindStringSubmatch(e.Message); m != nil {
			n, _ := strconv.Atoi(m[1])
			dups += n
		}
	}
	if dups == 0 {
		t.Errorf("digest 2 left out no near-duplicate; the copy was never read:\n%v", r2.Trace)
	}
	if !slices.Contains(refURLs(r2), h.web.PageURL(2)) {
		t.Errorf("digest 2 cites %v, not the new page %s", refURLs(r2), h.web.PageURL(2))
	}
}
