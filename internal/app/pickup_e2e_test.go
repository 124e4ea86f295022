package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// maxPickup is the longest a run may wait for a worker after it was
// created or decided, on an idle machine (a queue poll is 200 ms).
const maxPickup = 50 * time.Millisecond

// TestRunIsPickedUpAtOnce measures, with the engine's own timestamps, how
// long a run waited for a worker: from its creation to the lease of its
// first step, and from a decision to the lease that applied it. Neither
// may wait for the queue's poll. A busy machine can delay any one run by
// a scheduling slice, so the best of three runs is held to the bound; a
// run that waits for the poll waits 100–300 ms every time.
func TestRunIsPickedUpAtOnce(t *testing.T) {
	var seen []string
	for range 3 {
		created, decided := pickupWaits(t)
		seen = append(seen, fmt.Sprintf("after creation %s, after a decision %s", created, decided))
		if created <= maxPickup && decided <= maxPickup {
			t.Logf("picked up %s", seen[len(seen)-1])
			return
		}
	}
	t.Errorf("every run waited for a worker longer than %s: %s", maxPickup, strings.Join(seen, "; "))
}

// pickupWaits runs one guided run through its plan review and returns how
// long it waited for a worker after it was created and after the plan was
// approved.
func pickupWaits(t *testing.T) (created, decided time.Duration) {
	t.Helper()
	h := newHarness(t, &researchtest.Researcher{}, nil)
	run := h.start(checkpoints.ModeGuided, pipeline.Limits{})
	plan := h.next()
	r, err := h.app.Store.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.LeasedAt.IsZero() {
		t.Fatal("the run was never leased")
	}
	created = r.LeasedAt.Sub(r.CreatedAt)
	h.decide(plan, checkpoints.Decision{Action: checkpoints.Approve})
	h.next() // the draft
	r, err = h.app.Store.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	decided = r.LeasedAt.Sub(r.Instance(plan.ID).DecidedAt)
	if decided < 0 {
		t.Fatalf("leased at %s before the decision at %s", r.LeasedAt, r.Instance(plan.ID).DecidedAt)
	}
	return created, decided
}
