package terminal

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestNeverAtTheSourceReview: "never 2" at the source review takes the
// site of source [2] out of the run through NeverDomain, says nothing is
// saved beyond the run, shows the review again, and then the decision is
// asked for as before; a number not listed is explained.
func TestNeverAtTheSourceReview(t *testing.T) {
	payload := func(sources ...pipeline.SourceView) []byte {
		b, err := json.Marshal(pipeline.SourcesPayload{Question: "q", Sources: sources, Total: len(sources)})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := pipeline.SourceView{ID: 1, Title: "Kept", URL: "https://kept.example/a", Domain: "kept.example"}
	b := pipeline.SourceView{ID: 2, Title: "Dropped", URL: "https://spam.example/b", Domain: "spam.example"}
	inst := checkpoints.Instance{ID: "r-1.cp-2", ControlType: checkpoints.SourceReview, Label: "Sources", Required: true,
		Actions: []checkpoints.Action{checkpoints.Approve, checkpoints.Edit, checkpoints.Reject}, Payload: payload(a, b)}
	var calls []string
	var out strings.Builder
	p := NewPrompter(strings.NewReader("never 9\nnever 2\na\n"), &out)
	p.By = "ada"
	p.NeverDomain = func(_ context.Context, instanceID, by, domain string) (*pipeline.Run, string, error) {
		calls = append(calls, instanceID+" "+by+" "+domain)
		after := inst
		after.Payload = payload(a)
		return &pipeline.Run{Waiting: inst.ID, Checkpoints: []checkpoints.Instance{after},
			Sources: []pipeline.Source{{ID: 2, URL: b.URL, Excluded: true, FetchErr: pipeline.NeverDomainReason + " by ada (never spam.example)"}}}, "spam.example", nil
	}
	d, err := p.Ask(context.Background(), inst, nil)
	if err != nil || d.Action != checkpoints.Approve {
		t.Fatalf("Ask = %+v, %v", d, err)
	}
	if len(calls) != 1 || calls[0] != "r-1.cp-2 ada spam.example" {
		t.Errorf("NeverDomain calls %q", calls)
	}
	s := out.String()
	for _, want := range []string{"never N?", "There is no listed source [9]", "Never using spam.example in this run (sources taken out: 1)",
		"Nothing is saved beyond this run: to leave it out next time, pass --never-domain spam.example."} {
		if !strings.Contains(s, want) {
			t.Errorf("the terminal does not say %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "Dropped") != 1 {
		t.Errorf("the review shown again still lists the dropped source:\n%s", s)
	}
}
