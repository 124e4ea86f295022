package scheduler_test

import (
	"context"
	"errors"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// TestStreamDomainRulesApplyToDigests: a stream's domain rules, set by its
// owner (normalised; a bad entry refused and named; someone else refused)
// and grown by "never use this site", are the rules of each digest run;
// an edit of the stream's configuration keeps them.
func TestStreamDomainRulesApplyToDigests(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	st := f.create("Nordic heat pumps")
	if _, err := f.svc.SetDomains(ctx, "Nordic heat pumps", "USOMEONE", false, pipeline.DomainRules{Never: []string{"spam.example"}}); !errors.Is(err, scheduler.ErrNotAllowed) {
		t.Errorf("someone else set the rules: %v", err)
	}
	if _, err := f.svc.SetDomains(ctx, "Nordic heat pumps", "UOWNER", false, pipeline.DomainRules{Never: []string{"not_a_domain"}}); err == nil {
		t.Error("a bad domain was accepted")
	}
	if _, err := f.svc.SetDomains(ctx, "Nordic heat pumps", "UOWNER", false, pipeline.DomainRules{Only: []string{"Example.org", "ads.example"}, Never: []string{"https://Spam.example/x"}}); err != nil {
		t.Fatal(err)
	}
	name, err := f.svc.NeverDomain(ctx, st.ID, "ads.example", "UOWNER")
	if err != nil || name != "Nordic heat pumps" {
		t.Fatalf("NeverDomain = %q, %v", name, err)
	}
	if _, err := f.svc.Edit(ctx, st.ID, "UOWNER", false, dailySpec("Nordic heat pumps")); err != nil {
		t.Fatal(err)
	}
	if got := f.stream("Nordic heat pumps").Domains.String(); got != "only example.org · never spam.example, ads.example" {
		t.Fatalf("stream rules %q", got)
	}
	f.tickAt(at(0, "09:00"))
	starts := f.runner.starts()
	if len(starts) != 1 {
		t.Fatalf("%d digests, want 1", len(starts))
	}
	if got := starts[0].Domains.String(); got != "only example.org · never spam.example, ads.example" {
		t.Errorf("the digest run's rules %q, want the stream's", got)
	}
}
