package checkpoints

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func ptr(f float64) *float64 { return &f }

func abcOptions() []Option {
	return []Option{{Value: "a", Label: "Alpha"}, {Value: "b", Label: "Beta"}, {Value: "c", Label: "Gamma"}}
}

func TestValidateFieldTypes(t *testing.T) {
	abc := abcOptions()
	type tc struct {
		name    string
		field   Field
		value   any
		want    any    // normalised value; nil with wantErr "" means left out
		wantErr string // substring of the field's message
	}
	text := Field{Key: "k", Type: FieldText, Label: "K"}
	area := Field{Key: "k", Type: FieldTextarea, Label: "K"}
	sel := Field{Key: "k", Type: FieldSelect, Label: "K", Options: abc}
	radio := Field{Key: "k", Type: FieldRadio, Label: "K", Options: abc}
	multi := Field{Key: "k", Type: FieldMultiSelect, Label: "K", Options: abc}
	boxes := Field{Key: "k", Type: FieldCheckbox, Label: "K", Options: abc}
	box := Field{Key: "k", Type: FieldCheckbox, Label: "K"}
	num := Field{Key: "k", Type: FieldNumber, Label: "K"}
	rng := Field{Key: "k", Type: FieldRange, Label: "K", Min: ptr(1), Max: ptr(10)}
	chips := Field{Key: "k", Type: FieldChips, Label: "K"}
	chipsOpt := Field{Key: "k", Type: FieldChips, Label: "K", Options: abc}
	cases := []tc{
		// text
		{"text ok trimmed", text, "  hello  ", "hello", ""},
		{"text wrong type", text, 5.0, nil, "Must be text"},
		{"text list wrong type", text, []string{"a"}, nil, "Must be text"},
		{"text blank optional left out", text, "   ", nil, ""},
		// textarea
		{"textarea ok keeps inner lines", area, "\n a\n b \n", "a\n b", ""},
		{"textarea wrong type", area, true, nil, "Must be text"},
		// select
		{"select ok", sel, "b", "b", ""},
		{"select trimmed", sel, " c ", "c", ""},
		{"select case-insensitive value", sel, "B", "b", ""},
		{"select by label", sel, "gamma", "c", ""},
		{"select not an option", sel, "z", nil, `"z" is not one of the options`},
		{"select wrong type", sel, []string{"a"}, nil, "Choose one of the options"},
		{"select bool wrong type", sel, true, nil, "Choose one of the options"},
		{"select number matches numeric option", Field{Key: "k", Type: FieldSelect, Label: "K", Options: []Option{{Value: "3", Label: "3"}}}, 3.0, "3", ""},
		// radio
		{"radio ok", radio, "a", "a", ""},
		{"radio not an option", radio, "d", nil, "not one of the options"},
		{"radio wrong type", radio, map[string]any{}, nil, "Choose one of the options"},
		// multi_select
		{"multi []string", multi, []string{"a", "c"}, []string{"a", "c"}, ""},
		{"multi single string", multi, "b", []string{"b"}, ""},
		{"multi []any from JSON", multi, []any{"c", "a"}, []string{"c", "a"}, ""},
		{"multi dedup and drop blanks", multi, []any{"a", " a ", "", "A"}, []string{"a"}, ""},
		{"multi not an option", multi, []string{"a", "x"}, nil, `"x" is not one of the options`},
		{"multi wrong element type", multi, []any{"a", true}, nil, "Must be a list of choices"},
		{"multi wrong type", multi, 4.0, nil, "Must be a list of choices"},
		{"multi empty optional left out", multi, []any{}, nil, ""},
		// checkbox with options
		{"checkboxes ok", boxes, []any{"b"}, []string{"b"}, ""},
		{"checkboxes not an option", boxes, []any{"q"}, nil, "not one of the options"},
		// bare checkbox
		{"checkbox true", box, true, true, ""},
		{"checkbox false kept", box, false, false, ""},
		{"checkbox string true", box, " TRUE ", true, ""},
		{"checkbox string false", box, "false", false, ""},
		{"checkbox wrong string", box, "yes please", nil, "Must be yes or no"},
		{"checkbox wrong type", box, 1.0, nil, "Must be yes or no"},
		{"checkbox required must be checked", Field{Key: "k", Type: FieldCheckbox, Label: "K", Required: true}, false, nil, "Must be checked"},
		// number
		{"number float", num, 2.5, 2.5, ""},
		{"number int", num, 7, 7.0, ""},
		{"number int64", num, int64(-3), -3.0, ""},
		{"number json.Number", num, json.Number("12.25"), 12.25, ""},
		{"number string", num, " 42 ", 42.0, ""},
		{"number blank string left out", num, " ", nil, ""},
		{"number zero kept", num, 0, 0.0, ""},
		{"number bad string", num, "forty", nil, "Must be a number"},
		{"number wrong type", num, true, nil, "Must be a number"},
		{"number below min", Field{Key: "k", Type: FieldNumber, Label: "K", Min: ptr(1)}, 0.5, nil, "Must be at least 1"},
		{"number above max", Field{Key: "k", Type: FieldNumber, Label: "K", Max: ptr(10)}, 11, nil, "Must be at most 10"},
		{"number between", Field{Key: "k", Type: FieldNumber, Label: "K", Min: ptr(1), Max: ptr(10)}, 0, nil, "Must be between 1 and 10"},
		{"number at bounds ok", Field{Key: "k", Type: FieldNumber, Label: "K", Min: ptr(1), Max: ptr(10)}, 10, 10.0, ""},
		// range
		{"range ok", rng, 1, 1.0, ""},
		{"range out of bounds", rng, 10.5, nil, "Must be between 1 and 10"},
		{"range wrong type", rng, "x", nil, "Must be a number"},
		{"range without bounds", Field{Key: "k", Type: FieldRange, Label: "K", Min: ptr(1)}, 3, nil, "no minimum and maximum"},
		// chips
		{"chips free tags", chips, []any{" go ", "rust", "go"}, []string{"go", "rust"}, ""},
		{"chips single string", chips, "solo", []string{"solo"}, ""},
		{"chips with options restricted", chipsOpt, []string{"a", "nope"}, nil, `"nope" is not one of the options`},
		{"chips with options ok", chipsOpt, []string{"alpha"}, []string{"a"}, ""},
		{"chips wrong type", chips, 3.0, nil, "Must be a list of choices"},
		// selection counts
		{"pick at most", Field{Key: "k", Type: FieldMultiSelect, Label: "K", Options: abc, Max: ptr(1)}, []string{"a", "b"}, nil, "Pick at most 1"},
		{"pick at least", Field{Key: "k", Type: FieldChips, Label: "K", Min: ptr(2)}, []string{"a"}, nil, "Pick at least 2"},
		{"pick between", Field{Key: "k", Type: FieldCheckbox, Label: "K", Options: abc, Min: ptr(1), Max: ptr(2)}, []string{"a", "b", "c"}, nil, "Pick between 1 and 2"},
		// lengths
		{"text max length default 3000 ok", text, strings.Repeat("é", 3000), strings.Repeat("é", 3000), ""},
		{"text max length default 3000 exceeded", text, strings.Repeat("é", 3001), nil, "Must be at most 3000 characters (this is 3001)"},
		{"textarea own max length", Field{Key: "k", Type: FieldTextarea, Label: "K", MaxLength: 5}, "123456", nil, "at most 5 characters"},
		{"max length counts runes after trim", Field{Key: "k", Type: FieldText, Label: "K", MaxLength: 3}, "  äöü  ", "äöü", ""},
		// unsupported type
		{"unknown field type", Field{Key: "k", Type: "slider", Label: "K"}, 1, nil, "unsupported type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, errs := Validate([]Field{c.field}, map[string]any{"k": c.value})
			if c.wantErr != "" {
				if len(errs) != 1 || errs[0].Key != "k" || !strings.Contains(errs[0].Message, c.wantErr) {
					t.Fatalf("errors = %+v, want one for k containing %q", errs, c.wantErr)
				}
				if got != nil {
					t.Fatalf("values = %v, want nil on error", got)
				}
				return
			}
			if len(errs) != 0 {
				t.Fatalf("unexpected errors %+v", errs)
			}
			v, ok := got["k"]
			if c.want == nil {
				if ok {
					t.Fatalf("k = %#v, want it left out", v)
				}
				return
			}
			if !reflect.DeepEqual(v, c.want) {
				t.Fatalf("k = %#v (%T), want %#v (%T)", v, v, c.want, c.want)
			}
		})
	}
}

func TestValidateRequiredAndUnknown(t *testing.T) {
	fields := []Field{
		{Key: "title", Type: FieldText, Label: "Title", Required: true},
		{Key: "tags", Type: FieldChips, Label: "Tags", Required: true},
		{Key: "n", Type: FieldNumber, Label: "N", Required: true},
		{Key: "opt", Type: FieldTextarea, Label: "Opt"},
	}
	cases := []struct {
		name   string
		values map[string]any
		want   []FieldError
	}{
		{"all missing", nil, []FieldError{{"title", msgRequired}, {"tags", msgRequired}, {"n", msgRequired}}},
		{"blank and empty count as missing", map[string]any{"title": "  ", "tags": []any{" "}, "n": nil}, []FieldError{{"title", msgRequired}, {"tags", msgRequired}, {"n", msgRequired}}},
		{"unknown keys sorted after fields", map[string]any{"title": "x", "tags": "t", "n": 1, "zeta": 1, "alpha": "a"}, []FieldError{{"alpha", msgUnknown}, {"zeta", msgUnknown}}},
		{"ok", map[string]any{"title": "x", "tags": "t", "n": 0}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, errs := Validate(fields, c.values)
			if !reflect.DeepEqual(errs, c.want) {
				t.Fatalf("errors = %+v, want %+v", errs, c.want)
			}
			if c.want == nil {
				want := map[string]any{"title": "x", "tags": []string{"t"}, "n": 0.0}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("values = %#v, want %#v", got, want)
				}
			}
		})
	}
}

func TestValidateEmptyFormIsNonNil(t *testing.T) {
	got, errs := Validate(nil, nil)
	if got == nil || len(got) != 0 || errs != nil {
		t.Fatalf("Validate(nil, nil) = %v, %v; want empty map, no errors", got, errs)
	}
}

func TestValidationErrorListsFields(t *testing.T) {
	err := error(&ValidationError{Fields: []FieldError{{"a", "This is required"}, {"b", "Must be a number"}}})
	msg := err.Error()
	for _, want := range []string{"a: This is required", "b: Must be a number"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Error() = %q, missing %q", msg, want)
		}
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) != 2 {
		t.Fatalf("errors.As failed: %v", err)
	}
}

func TestValidateDoesNotMutateInput(t *testing.T) {
	abc := abcOptions()
	in := []string{" a ", "b"}
	values := map[string]any{"k": in}
	if _, errs := Validate([]Field{{Key: "k", Type: FieldMultiSelect, Label: "K", Options: abc}}, values); errs != nil {
		t.Fatal(errs)
	}
	if in[0] != " a " {
		t.Fatalf("input slice modified: %q", in)
	}
}
