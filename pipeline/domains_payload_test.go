package pipeline

import "testing"

// TestPlanPayloadCarriesTheDomainRules: the plan checkpoint's payload
// states the run's domain rules as one line for the presenters.
func TestPlanPayloadCarriesTheDomainRules(t *testing.T) {
	r := &Run{Question: "q", Domains: DomainRules{Only: []string{"example.org"}, Never: []string{"spam.example"}}}
	if got := r.planPayload().Domains; got != "only example.org · never spam.example" {
		t.Errorf("plan payload domains = %q", got)
	}
	if got := (&Run{Question: "q"}).planPayload().Domains; got != "" {
		t.Errorf("no rules, payload domains = %q", got)
	}
}
