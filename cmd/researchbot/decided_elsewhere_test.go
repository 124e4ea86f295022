package main

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
)

// TestATerminalRunDecidedElsewhereGoesOnAtOnce: a terminal run's worker
// listens to its private queue's wake-ups only once the run waits for a
// person (the follower's subscription starts it). A plan approved by
// another process (Slack, `researchbot checkpoints`) must still wake that
// worker at once, not at its next claim pass: with a 60 s lease the
// passes come every 30 s, so the run going on within 10 s is the wake-up's
// doing.
func TestATerminalRunDecidedElsewhereGoesOnAtOnce(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.startWith(t, []string{"RUN_LEASE=60s"}, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	runID := c.waitFor(t, startedRe)[1]
	c.waitFor(t, regexp.MustCompile(`^Estimate: about`)) // the plan is shown: the run waits for a person

	elsewhere := assemble(t, w.env(map[string]string{"RUN_LEASE": "60s"}), app.Options{})
	ctx := context.Background()
	r, err := elsewhere.Engine.Load(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	plan := r.Current()
	if plan == nil {
		t.Fatalf("run %s waits on no checkpoint (status %s)", runID, r.Status)
	}
	searchesBefore := w.web.Searches()
	decided := time.Now()
	if _, err := elsewhere.Engine.Decide(ctx, plan.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U2"}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, regexp.MustCompile(`Research plan was settled without you`))
	for w.web.Searches() == searchesBefore {
		if time.Since(decided) > 10*time.Second {
			t.Fatalf("the run did not search within 10 s of a decision made elsewhere (a claim pass comes every 30 s); stderr:\n%s", c.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("approved by another process: the terminal's worker searched %v later", time.Since(decided).Round(time.Millisecond))
}
