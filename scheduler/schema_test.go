package scheduler

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/invopop/jsonschema"
)

// TestProposalJSONSchema reflects Proposal the way the llm package does (invopop) and
// checks what strict structured output needs: every property required, no extra
// properties, the mode enum, and list-of-pairs extracted data.
func TestProposalJSONSchema(t *testing.T) {
	r := &jsonschema.Reflector{DoNotReference: true}
	b, err := json.Marshal(r.Reflect(&Proposal{}))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type                 string   `json:"type"`
		Required             []string `json:"required"`
		AdditionalProperties *bool    `json:"additionalProperties"`
		Properties           map[string]struct {
			Type  string   `json:"type"`
			Enum  []string `json:"enum"`
			Items struct {
				Type                 string   `json:"type"`
				Required             []string `json:"required"`
				AdditionalProperties *bool    `json:"additionalProperties"`
			} `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	want := []string{"mode", "message", "target_field", "extracted_data", "suggestions", "options", "next_step"}
	if !slices.Equal(s.Required, want) {
		t.Errorf("required %v, want %v\n%s", s.Required, want, b)
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		t.Errorf("additionalProperties must be false:\n%s", b)
	}
	if got := s.Properties["mode"].Enum; !slices.Equal(got, []string{"QUESTION", "SUGGESTION"}) {
		t.Errorf("mode enum %v", got)
	}
	if got := s.Properties["next_step"].Enum; !slices.Equal(got, stepNames(Steps())) {
		t.Errorf("next_step enum %v, want every step", got)
	}
	if got := s.Properties["target_field"].Enum; len(got) != len(Fields())+1 || got[0] != "" {
		t.Errorf("target_field enum %v, want \"\" and every field", got)
	}
	ed := s.Properties["extracted_data"]
	if ed.Type != "array" || ed.Items.Type != "object" || !slices.Equal(ed.Items.Required, []string{"field", "value", "values"}) ||
		ed.Items.AdditionalProperties == nil || *ed.Items.AdditionalProperties {
		t.Errorf("extracted_data schema: %+v\n%s", ed, b)
	}
}

func stepNames(steps []ConversationStep) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = string(s)
	}
	return out
}
