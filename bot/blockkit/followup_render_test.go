package blockkit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// followUpReport is a report citing two pages.
func followUpReport() *pipeline.Report {
	return &pipeline.Report{Title: "Heat pumps", References: []pipeline.Reference{
		{N: 1, SourceID: 7, Title: "Defrost cycles", URL: "https://example.org/defrost"},
		{N: 2, SourceID: 4, Title: "Costs", URL: "https://example.org/cost"},
	}}
}

func TestGoldenFollowUps(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	answered := pipeline.FollowUp{
		ID: "r-1.f1", Question: "What did [1] say about defrost?", By: "U1", At: at, Answered: true, CostUSD: 0.0123,
		Answer: "Defrost runs **about five minutes** an hour [1].\n\n- humid air\n- near freezing [1]\n\nCosts are *high* [2].",
		Claims: []pipeline.Claim{
			{Ref: 1, SourceID: 1, Sentence: "Defrost runs about five minutes an hour [1].", Status: pipeline.ClaimVerified},
			{Ref: 2, SourceID: 2, Sentence: "Costs are high [2].", Status: pipeline.ClaimUnsupported, Reason: "the quote was not found in the cited source"},
		},
		Missing: "Nothing on noise.",
	}
	unanswered := pipeline.FollowUp{ID: "r-1.f2", Question: "How loud are they?", By: "U1", At: at, Missing: "The sources say nothing about noise.", CostUSD: 0.01}
	researched := unanswered
	researched.Child = "r-child"
	golden(t, "followup_answered", msg(RenderFollowUp(followUpReport(), answered)))
	golden(t, "followup_unanswered", msg(RenderFollowUp(followUpReport(), unanswered)))
	golden(t, "followup_researched", msg(RenderFollowUp(followUpReport(), researched)))
	golden(t, "followup_started", msg(RenderFollowUpStarted(unanswered, "r-child", "U2")))
	golden(t, "followup_of", msg(RenderFollowUpOf(&pipeline.Run{ID: "r-1", Question: "How well do heat pumps work?"})))
}

// TestFollowUpNeutralisesHostileText: mentions, broadcasts and masked links
// in the question, the answer (inside bold and code) and the missing note
// are shown as text, and a link to a page the report does not cite loses
// its target.
func TestFollowUpNeutralisesHostileText(t *testing.T) {
	f := pipeline.FollowUp{
		ID: "r-1.f1", By: "U1", Answered: true, Question: "<!channel> what did <@U999> say? <https://evil.example|click>",
		Answer:  "**<!channel> alert** and `<!here>` see [the study](https://evil.example/x) and [defrost](https://example.org/defrost) [1].",
		Claims:  []pipeline.Claim{{Ref: 1, Status: pipeline.ClaimVerified}},
		Missing: "<!everyone> <@U123>",
	}
	for _, blocks := range []json.RawMessage{rawJSON(RenderFollowUp(followUpReport(), f)), rawJSON(RenderFollowUpPending("U1", f.Question))} {
		s := string(blocks)
		for _, bad := range []string{"<!channel>", "<!here>", "<!everyone>", "<@U999>", "<@U123>", "<https://evil.example", "(https://evil.example"} {
			if strings.Contains(s, bad) {
				t.Errorf("%q survived:\n%s", bad, s)
			}
		}
	}
	s := string(rawJSON(RenderFollowUp(followUpReport(), f)))
	if !strings.Contains(s, "[defrost](https://example.org/defrost)") { // the answer is a markdown block
		t.Errorf("the link to a cited page was lost:\n%s", s)
	}
}

// rawJSON is v as JSON without HTML escaping, so "<" reads as "<".
func rawJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}
