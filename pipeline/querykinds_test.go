package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
)

func TestCheckQueryLine(t *testing.T) {
	for line, bad := range map[string]bool{
		"web: heat pumps":           false,
		"academic: heat pump COP":   false,
		"heat pumps in the cold":    false,
		"COVID-19: effects on jobs": false, // a capitalised prefix is part of the query
		"what is it: a question":    false, // so is one with spaces
		"blog: heat pump reviews":   true,
		"podcast: heat pumps":       true,
	} {
		if err := CheckQueryLine(line); (err != nil) != bad {
			t.Errorf("CheckQueryLine(%q) = %v, want an error: %v", line, err, bad)
		}
	}
}

// TestAPlanEditWithAnUnknownQueryTypeIsRefused: the edit comes back as an
// error of the queries field naming the line, not as a web query.
func TestAPlanEditWithAnUnknownQueryTypeIsRefused(t *testing.T) {
	inst := &checkpoints.Instance{ControlType: checkpoints.PlanReview}
	edit := checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{checkpoints.KeyQueries: "web: a\nblog: b"}}
	var verr *checkpoints.ValidationError
	if err := checkPlanEdit(inst, edit); !errors.As(err, &verr) || len(verr.Fields) != 1 ||
		verr.Fields[0].Key != checkpoints.KeyQueries || !strings.HasPrefix(verr.Fields[0].Message, `line 2: "blog" is not a query type`) {
		t.Fatalf("err = %v", err)
	}
	edit.Values[checkpoints.KeyQueries] = "web: a\nnews: b"
	if err := checkPlanEdit(inst, edit); err != nil {
		t.Errorf("a valid edit was refused: %v", err)
	}
	if err := checkPlanEdit(inst, checkpoints.Decision{Action: checkpoints.Approve}); err != nil {
		t.Errorf("an approval was refused: %v", err)
	}
}
