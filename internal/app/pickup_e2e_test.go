package app

import (
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
// may wait for the queue's poll.
func TestRunIsPickedUpAtOnce(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{}, nil)
	run := h.start(checkpoints.ModeGuided, pipeline.Limits{})
	plan := h.next()
	r, err := h.app.Store.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wait := r.LeasedAt.Sub(r.CreatedAt); r.LeasedAt.IsZero() || wait > maxPickup {
		t.Errorf("created at %s, first leased at %s: waited %s for a worker (at most %s)", r.CreatedAt, r.LeasedAt, wait, maxPickup)
	}
	h.decide(plan, checkpoints.Decision{Action: checkpoints.Approve})
	h.next() // the draft
	r, err = h.app.Store.Load(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	decided := r.Instance(plan.ID).DecidedAt
	if wait := r.LeasedAt.Sub(decided); wait < 0 || wait > maxPickup {
		t.Errorf("decided at %s, leased at %s: waited %s for a worker (at most %s)", decided, r.LeasedAt, wait, maxPickup)
	}
}
