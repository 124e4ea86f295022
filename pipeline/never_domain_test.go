package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestNeverDomainAtSourceReview: "never use other.net" at the source
// review excludes that domain's sources at once (the open checkpoint no
// longer lists them), joins the run's never list, and no later step reads
// it; the report lists the source with the person's reason and the trace
// says who did it. At another checkpoint it is refused.
func TestNeverDomainAtSourceReview(t *testing.T) {
	ctx := context.Background()
	w := &domainWeb{}
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: &scripted{reviews: []pipeline.CritiqueOutput{passes}}, Searcher: w, Fetcher: w,
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Start(ctx, pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}, ReviewSources: true,
	}); err != nil {
		t.Fatal(err)
	}
	advance := func() *pipeline.Run {
		t.Helper()
		if err := eng.Advance(ctx, "r-1"); err != nil {
			t.Fatal(err)
		}
		r, err := store.Load(ctx, "r-1")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	approve := func(r *pipeline.Run, want string) *pipeline.Run {
		t.Helper()
		inst := r.Current()
		if inst == nil || inst.DefinitionID != want {
			t.Fatalf("the run is %s at %s, want it waiting at %s", r.Status, r.Step, want)
		}
		if _, err := eng.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
			t.Fatal(err)
		}
		return advance()
	}
	r := advance()
	if _, _, err := eng.NeverDomain(ctx, r.Current().ID, "U1", "other.net"); !errors.Is(err, pipeline.ErrNotSourceReview) {
		t.Errorf("never use at the plan review: %v, want ErrNotSourceReview", err)
	}
	r = approve(r, checkpoints.PlanReview)
	inst := r.Current()
	if inst == nil || inst.DefinitionID != checkpoints.SourceReview {
		t.Fatalf("the run is %s at %s, want the source review", r.Status, r.Step)
	}
	if _, _, err := eng.NeverDomain(ctx, inst.ID, "U1", "not a domain"); err == nil {
		t.Error("a bad domain was accepted")
	}
	r, got, err := eng.NeverDomain(ctx, inst.ID, "U1", "Other.NET")
	if err != nil || got != "other.net" {
		t.Fatalf("NeverDomain = %q, %v", got, err)
	}
	if r.Domains.String() != "never other.net" {
		t.Errorf("the run's rules %q", r.Domains)
	}
	var p pipeline.SourcesPayload
	if err := json.Unmarshal(r.Current().Payload, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Sources) == 0 || slices.ContainsFunc(p.Sources, func(s pipeline.SourceView) bool { return s.Domain == "other.net" }) {
		t.Errorf("the open source review still lists other.net: %+v", p.Sources)
	}
	for _, f := range r.Current().Fields {
		if f.RuntimeOptions && slices.ContainsFunc(f.Options, func(o checkpoints.Option) bool { return strings.Contains(o.Label, "other.net") }) {
			t.Errorf("the Edit form's %s still offers other.net: %+v", f.Key, f.Options)
		}
		if f.Key == checkpoints.KeyExclude && len(f.Options) != len(p.Sources) {
			t.Errorf("the Edit form offers %d sources, the review lists %d", len(f.Options), len(p.Sources))
		}
	}
	r = approve(r, checkpoints.SourceReview)
	r = approve(r, checkpoints.DraftReview)
	if r.Status != pipeline.StatusCompleted || r.Report == nil {
		t.Fatalf("run %s at %s (%s), want completed", r.Status, r.Step, r.FallbackReason)
	}
	for _, u := range w.fetched {
		if strings.Contains(u, "other.net") {
			t.Errorf("fetched %s after never use other.net", u)
		}
	}
	if len(w.fetched) == 0 {
		t.Error("nothing was fetched")
	}
	unread := strings.Join(r.Report.Provenance.Unread, "\n")
	if !strings.Contains(unread, "https://other.net/d — excluded at source review by U1 (never other.net)") {
		t.Errorf("the report does not list the person's exclusion:\n%s", unread)
	}
	if !strings.Contains(strings.Join(r.Report.Provenance.Trace, "\n"), "U1 chose never to use other.net at source review (unread sources excluded: 1)") {
		t.Errorf("the trace does not record it:\n%s", strings.Join(r.Report.Provenance.Trace, "\n"))
	}
}
