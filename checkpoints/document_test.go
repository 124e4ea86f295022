package checkpoints

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// seedDoc is seed 004's example definition.
const seedDoc = `{
  "control_type": "confidence_check",
  "label": "Confidence check",
  "description": "How sure are you of the plan?",
  "pipeline_position": "after_planning",
  "sort_order": 5,
  "applicable_modes": ["guided"],
  "timeout_seconds": 3600,
  "field_schema": [
    {"key": "confidence", "type": "select", "label": "Confidence in this summary", "required": true,
     "options": [{"value": "1", "label": "1 - Very low"}, {"value": "5", "label": "5 - Very high"}]},
    {"key": "notes", "type": "textarea", "label": "Additional notes", "required": false, "placeholder": "Anything unclear?"}
  ]
}`

func TestParseDocumentFillsSeedDefaults(t *testing.T) {
	doc, d, err := ParseDocument([]byte(seedDoc))
	if err != nil {
		t.Fatal(err)
	}
	if doc.MaxRetries != nil {
		t.Errorf("max_retries was not written but decoded as %v", *doc.MaxRetries)
	}
	if d.ID != "confidence_check" || d.Position != AfterPlanning || d.SortOrder != 5 || d.Timeout != time.Hour {
		t.Errorf("got %+v", d)
	}
	if d.MaxRetries != 2 || d.BreakerThreshold != 5 || d.BreakerWindow != time.Hour || !d.Enabled {
		t.Errorf("defaults: retries %d, breaker %d/%s, enabled %v", d.MaxRetries, d.BreakerThreshold, d.BreakerWindow, d.Enabled)
	}
	if len(d.Fields) != 2 || d.Fields[0].Options[1].Label != "5 - Very high" || d.Fields[1].Placeholder != "Anything unclear?" {
		t.Errorf("fields %+v", d.Fields)
	}
}

func TestParseDocumentListsEveryProblemWithItsPath(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string
	}{
		{"not JSON", `{"control_type": "x",`, []string{"$: not valid JSON"}},
		{"not JSON, line", "{\n  \"label\": \"x\"\n  \"id\": 1}", []string{"(line 3, column 3)"}},
		{"not an object", `[1, 2]`, []string{"$: must be an object"}},
		{"unknown field type", strings.Replace(seedDoc, `"type": "textarea"`, `"type": "colour"`, 1),
			[]string{`field_schema[1].type: unknown type "colour" (one of text, textarea, select, multi_select, checkbox, radio, number, range, chips)`}},
		{"several at once", `{"control_type": "Bad Slug", "label": 3, "colour": "red", "pipeline_position": "after_lunch",
			"field_schema": [{"key": "a", "type": "range", "label": "A", "min": "1"}, {"key": "b", "type": "text", "label": "B", "options": [{"value": 1}]}]}`,
			[]string{"colour: unknown key", "label: is number, must be a string", "field_schema[0].min: is string, must be a number", "field_schema[1].options[0].value: is number, must be a string"}},
		{"semantic", `{"control_type": "c", "label": "C", "pipeline_position": "after_lunch", "max_retries": -1,
			"field_schema": [{"key": "a", "type": "range", "label": "A", "min": 1}, {"key": "a", "type": "select", "label": "S"}]}`,
			[]string{`pipeline_position: unknown position "after_lunch"`, "max_retries: max retries -1 is negative",
				"field_schema[0].max: range needs both min and max", "field_schema[1].options: select needs options", `field_schema[1].key: field key "a" used twice`}},
		{"fractional seconds", `{"control_type": "c", "label": "C", "pipeline_position": "after_search", "timeout_seconds": 1.5}`,
			[]string{"timeout_seconds: is number 1.5, must be a whole number"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ParseDocument([]byte(c.doc))
			var de *DocumentError
			if !errors.As(err, &de) {
				t.Fatalf("err %v, want a *DocumentError", err)
			}
			if len(de.Problems) < len(c.want) {
				t.Errorf("%d problems, want at least %d:\n%v", len(de.Problems), len(c.want), err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%v", w, err)
				}
			}
		})
	}
}

func TestDocumentOfRoundTripsEveryBuiltin(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, d := range Builtins(now) {
		raw, err := json.Marshal(DocumentOf(d))
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := ParseDocument(raw)
		if err != nil {
			t.Fatalf("%s: %v\n%s", d.ID, err, raw)
		}
		got.CreatedAt, got.UpdatedAt = d.CreatedAt, d.UpdatedAt
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(d)
		if string(a) != string(b) {
			t.Errorf("%s changed in the round trip:\n%s\n%s", d.ID, a, b)
		}
	}
}

func TestChangeProblemsKeepBuiltinsReadable(t *testing.T) {
	old := Builtins(time.Now())[0]
	next := old
	next.Label, next.Modes, next.Timeout = "Plan", []string{ModeFull}, time.Hour
	next.Fields = slices.Clone(old.Fields)
	next.Fields[0].Label = "Questions"
	if ps := ChangeProblems(old, next); len(ps) != 0 {
		t.Fatalf("an allowed edit was refused: %v", ps)
	}
	next.Position = AfterSearch
	next.Fields[1].Type = FieldText
	next.Fields = append(next.Fields[:4], Field{Key: "extra", Type: FieldText, Label: "X"})
	var got []string
	for _, p := range ChangeProblems(old, next) {
		got = append(got, p.String())
	}
	want := []string{`pipeline_position: a built-in's position stays "after_planning"`, `field_schema[1].type: a built-in's field "queries" stays a textarea`,
		`field_schema: a built-in keeps its field "note" (the engine reads it)`, `field_schema[4].key: a built-in takes no new fields ("extra"): the engine would not read it`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	custom := validDef()
	renamed := custom
	renamed.ID = "other"
	renamed.Position = AfterSearch
	if ps := ChangeProblems(custom, renamed); len(ps) != 1 || ps[0].Path != "id" {
		t.Fatalf("custom edit: %v", ps)
	}
}

// The field type specs admins read say what DefinitionProblems enforces.
func TestFieldTypeSpecsMatchValidation(t *testing.T) {
	specs := FieldTypeSpecs()
	if len(specs) != len(FieldTypes()) {
		t.Fatalf("%d specs for %d types", len(specs), len(FieldTypes()))
	}
	opts := []Option{{Value: "a", Label: "A"}}
	for i, s := range specs {
		if s.Type != FieldTypes()[i] {
			t.Fatalf("spec %d is %s, want %s", i, s.Type, FieldTypes()[i])
		}
		valid := func(f Field) bool {
			f.Key, f.Label, f.Type = "f", "F", s.Type
			return len(fieldProblems(f)) == 0
		}
		lo, hi := 0.0, 1.0
		if got := valid(Field{Options: opts, Min: &lo, Max: &hi}) || valid(Field{Options: opts}); got != (s.Options != "none") {
			t.Errorf("%s: options accepted %v, spec says %q", s.Type, got, s.Options)
		}
		if got := valid(Field{}); got != !strings.HasPrefix(s.Options, "required") && !strings.HasPrefix(s.Bounds, "required") {
			t.Errorf("%s: a bare field accepted %v, spec says options %q, bounds %q", s.Type, got, s.Options, s.Bounds)
		}
		withBounds := Field{Min: &lo, Max: &hi}
		if s.Options != "none" {
			withBounds.Options = opts
		}
		if got := valid(withBounds); got != (s.Bounds != "none") {
			t.Errorf("%s: bounds accepted %v, spec says %q", s.Type, got, s.Bounds)
		}
		if got := valid(Field{MaxLength: 5}); got != slices.Contains(s.Settings, "max_length") {
			t.Errorf("%s: max_length accepted %v, spec settings %v", s.Type, got, s.Settings)
		}
	}
}

func TestTheTimeoutPolicyRoundTripsThroughADocument(t *testing.T) {
	d := Builtins(t0)[0]
	d.OnTimeout = TimeoutApprove
	raw, err := json.Marshal(DocumentOf(d))
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := ParseDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.OnTimeout != TimeoutApprove {
		t.Fatalf("on_timeout lost: %s", raw)
	}
}
