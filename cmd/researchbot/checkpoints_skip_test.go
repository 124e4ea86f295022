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

func TestAnAdminContinuesWithoutACheckpointFromTheCommandLine(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	ctx := context.Background()
	env := func(k string) string { return map[string]string{"REDIS_URL": w.redisURL, "USER": "ops"}[k] }
	skip := func(getenv func(string) string, args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append([]string{"checkpoints", "skip"}, args...), getenv, strings.NewReader(""), &out, &errb)
		return out.String(), err
	}

	if _, err := skip(func(string) string { return "" }, "r-s1", "plan_review"); err == nil || !strings.Contains(err.Error(), "needs REDIS_URL") {
		t.Fatalf("without REDIS_URL: %v", err)
	}

	// A run whose required plan review could not be shown after its retries.
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
	inst := checkpoints.NewInstance(def, "r-s1.cp", "r-s1", nil, def.Fields, nil, now)
	if err := inst.Offer(now, "engine"); err != nil {
		t.Fatal(err)
	}
	if err := inst.Fail(now, "slack is down"); err != nil {
		t.Fatal(err)
	}
	if err := a.Store.Create(ctx, &pipeline.Run{
		ID: "r-s1", Question: "How well do heat pumps work?", Mode: checkpoints.ModeGuided, Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
		Status: pipeline.StatusWaiting, Step: pipeline.StepSearch, Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID, Stranded: inst.ID,
		CreatedAt: now, UpdatedAt: now,
	}); err != nil {
		t.Fatal(err)
	}

	if _, err := skip(env, "r-s1", "draft_review"); err == nil || !strings.Contains(err.Error(), `does not wait at "draft_review"`) {
		t.Fatalf("another checkpoint: %v", err)
	}
	if _, err := skip(env, "r-none", "plan_review"); err == nil || !strings.Contains(err.Error(), `no run "r-none"`) {
		t.Fatalf("unknown run: %v", err)
	}
	out, err := skip(env, "r-s1", "plan_review")
	if err != nil || !strings.Contains(out, "run r-s1 goes on without plan_review") {
		t.Fatalf("skip: %v %q", err, out)
	}
	r, err := a.Store.Load(ctx, "r-s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Instance(inst.ID); got.State != checkpoints.StateSkipped || r.Stranded != "" {
		t.Fatalf("state %s, stranded %q", got.State, r.Stranded)
	}
	if len(r.ReviewNotes) != 1 || !strings.Contains(r.ReviewNotes[0], "cli:ops, an admin, continued without it") {
		t.Fatalf("review notes %q", r.ReviewNotes)
	}
}
