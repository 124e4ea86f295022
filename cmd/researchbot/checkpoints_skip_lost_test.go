package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestCheckpointsSkipPassesOverACheckpointWhoseDecisionWasLost: a required
// plan review that is shown and open is refused (decide it), unless it was
// offered again because its earlier decision was lost with Redis's writes:
// then an admin may go on without it from the command line.
func TestCheckpointsSkipPassesOverACheckpointWhoseDecisionWasLost(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	ctx := context.Background()
	env := func(k string) string { return map[string]string{"REDIS_URL": w.redisURL, "USER": "ops"}[k] }
	skip := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append([]string{"checkpoints", "skip"}, args...), env, strings.NewReader(""), &out, &errb)
		return out.String(), err
	}
	cfg, err := config.Load(env)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	now := time.Now()
	def := checkpoints.Builtins(now)[0]
	for _, id := range []string{"r-open", "r-lost"} {
		inst := checkpoints.NewInstance(def, id+".cp", id, nil, def.Fields, nil, now)
		if err := inst.Offer(now, "engine"); err != nil {
			t.Fatal(err)
		}
		r := &pipeline.Run{
			ID: id, Question: "How well do heat pumps work?", Mode: checkpoints.ModeGuided, Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
			Status: pipeline.StatusWaiting, Step: pipeline.StepSearch, Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID,
			CreatedAt: now, UpdatedAt: now,
		}
		if id == "r-lost" {
			r.LostDecision = &pipeline.LostDecision{Checkpoint: inst.ID, At: now, Evidence: "test"}
		}
		if err := a.Store.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := skip("r-open", "plan_review"); err == nil || !strings.Contains(err.Error(), "can still be shown") {
		t.Fatalf("a required checkpoint that is shown: %v, want a refusal", err)
	}
	out, err := skip("r-lost", "plan_review")
	if err != nil || !strings.Contains(out, "run r-lost goes on without plan_review") {
		t.Fatalf("skip the checkpoint whose decision was lost: %v %q", err, out)
	}
	r, err := a.Store.Load(ctx, "r-lost")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Instance("r-lost.cp"); got.State != checkpoints.StateSkipped {
		t.Fatalf("state %s, want skipped", got.State)
	}
	if len(r.ReviewNotes) != 1 || !strings.Contains(r.ReviewNotes[0], "was lost when the bot's storage was restored; cli:ops, an admin, continued without it") {
		t.Fatalf("review notes %q", r.ReviewNotes)
	}
}
