package eval

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

func question(t *testing.T) Question {
	t.Helper()
	s, err := ParseQuestions([]byte(`{"questions": [{"id": "q1", "question": "What are the defaults?",
		"documents": ["specs/spec.pdf"],
		"facts": [{"name": "the default is 50", "pattern": "\\b50\\b"}, {"name": "the maximum is 100", "pattern": "maximum (is|of) 100"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s.Questions[0]
}

func TestGrade(t *testing.T) {
	refs := []pipeline.Reference{
		{N: 1, Title: "specs/spec.pdf, p. 3", URL: "docs://corpus/specs/spec.pdf#page=3"},
		{N: 2, Title: "notes/other.md", URL: "docs://corpus/notes/other.md"},
	}
	verified := func(sentence string, ref int) pipeline.Claim {
		return pipeline.Claim{Sentence: sentence, Ref: ref, Status: pipeline.ClaimVerified}
	}
	for _, tc := range []struct {
		name                             string
		rep                              *pipeline.Report
		claims, verified, precise, facts int
		missing                          string
		supported                        []bool
	}{
		{
			name: "a verified quote from the right document stating every fact",
			rep: &pipeline.Report{Sections: []pipeline.Section{{Content: "The default weight is 50 and the maximum is 100 [1]."}}, References: refs[:1],
				Claims: []pipeline.Claim{verified("The default weight is 50 and the maximum is 100 [1].", 1)}},
			claims: 1, verified: 1, precise: 1, facts: 2, supported: []bool{true, true},
		},
		{
			name: "the wrong document cited lowers precision, not the verified share",
			rep: &pipeline.Report{Abstract: "The default is 50 [1].", Sections: []pipeline.Section{{Content: "Other notes say 50 too [2]."}}, References: refs,
				Claims: []pipeline.Claim{verified("The default is 50 [1].", 1), verified("Other notes say 50 too [2].", 2)}},
			claims: 2, verified: 2, precise: 1, facts: 1, missing: "the maximum is 100", supported: []bool{true, false},
		},
		{
			name: "an unverified quote, and a fact stated only without support",
			rep: &pipeline.Report{Conclusion: "The maximum is 100.", Sections: []pipeline.Section{{Content: "The default is 50 [1]."}}, References: refs[:1],
				Claims: []pipeline.Claim{{Sentence: "The default is 50 [1].", Ref: 1, Status: pipeline.ClaimUnsupported}}},
			claims: 1, verified: 0, precise: 1, facts: 2, supported: []bool{false, false},
		},
		{
			name:  "a fact only in the reference list is not found",
			rep:   &pipeline.Report{Sections: []pipeline.Section{{Content: "Nothing."}}, References: []pipeline.Reference{{N: 1, Title: "maximum is 100", URL: "docs://corpus/specs/spec.pdf"}}},
			facts: 0, missing: "the default is 50; the maximum is 100", supported: []bool{false, false},
		},
		{name: "no report", rep: nil, missing: "the default is 50; the maximum is 100", supported: []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Grade(question(t), "r-1", pipeline.StatusCompleted, tc.rep)
			if s.Claims != tc.claims || s.Verified != tc.verified || s.Precise != tc.precise || s.FactsFound() != tc.facts {
				t.Errorf("claims %d verified %d precise %d facts %d; want %d %d %d %d", s.Claims, s.Verified, s.Precise, s.FactsFound(), tc.claims, tc.verified, tc.precise, tc.facts)
			}
			if got := strings.Join(s.Missing(), "; "); got != tc.missing {
				t.Errorf("missing %q, want %q", got, tc.missing)
			}
			for i, f := range s.Facts {
				if f.Supported != tc.supported[i] {
					t.Errorf("fact %q supported %v, want %v", f.Name, f.Supported, tc.supported[i])
				}
			}
		})
	}
}

func TestSharesAreUndefinedWithoutClaims(t *testing.T) {
	s := Grade(question(t), "r-1", pipeline.StatusFailed, nil)
	if _, ok := s.VerifiedShare(); ok {
		t.Error("a verified share without claims")
	}
	if _, ok := s.Precision(); ok {
		t.Error("a precision without claims")
	}
	if v, ok := s.FactShare(); !ok || v != 0 {
		t.Errorf("fact share %v %v, want 0", v, ok)
	}
	r := Summarize("m", "quick", []Score{s})
	if r.Total.VerifiedShare != nil || r.Total.Precision != nil || r.Total.FactShare == nil || *r.Total.FactShare != 0 || r.Total.Reports != 0 {
		t.Errorf("totals %+v", r.Total)
	}
}

func TestParseQuestionsNamesEveryProblem(t *testing.T) {
	_, err := ParseQuestions([]byte(`{"questions": [
		{"id": "a", "question": "Q?", "documents": ["../x.pdf"], "facts": [{"name": "bad", "pattern": "("}]},
		{"id": "a", "question": "", "documents": [], "facts": []}]}`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`question 1 (a): document "../x.pdf" is not a path within the collection`,
		`question 1 (a): fact "bad": the pattern is not a regular expression`,
		"question 2 (a): the id is used twice", "question 2 (a): no question", "question 2 (a): no documents", "question 2 (a): no facts",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
	if _, err := ParseQuestions([]byte(`{"questions": [], "extra": 1}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Errorf("unknown field: %v", err)
	}
}
