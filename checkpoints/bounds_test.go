package checkpoints

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestDefinitionBounds: each unbounded or unsafe definition the fault suite
// stored is refused, with a problem at the path to fix and the bound.
func TestDefinitionBounds(t *testing.T) {
	many := func(n int) []Option {
		opts := make([]Option, n)
		for i := range opts {
			opts[i] = Option{Value: fmt.Sprintf("o%d", i), Label: fmt.Sprintf("Option %d", i)}
		}
		return opts
	}
	cases := []struct {
		name     string
		modify   func(d *Definition)
		path     string
		contains string
	}{
		{"million-char label", func(d *Definition) { d.Label = strings.Repeat("a", 1_000_000) }, "label", "is 1000000 characters long (at most 150)"},
		{"long description", func(d *Definition) { d.Description = strings.Repeat("é", 3001) }, "description", "at most 3000"},
		{"10,000 options", func(d *Definition) { d.Fields[0].Options = many(10_000) }, "field_schema[0].options", "10000 options is too many (at most 100)"},
		{"1,000 fields", func(d *Definition) {
			for i := range 1000 {
				d.Fields = append(d.Fields, Field{Key: fmt.Sprintf("f%d", i), Type: FieldText, Label: "F"})
			}
		}, "field_schema", "fields is too many (at most 50)"},
		{"many modes", func(d *Definition) {
			d.Modes = nil
			for i := range 21 {
				d.Modes = append(d.Modes, fmt.Sprintf("m%d", i))
			}
		}, "applicable_modes", "at most 20"},
		{"NUL in label", func(d *Definition) { d.Label = "Risk\x00check" }, "label", "control character U+0000 at character 5"},
		{"ESC[2J in label", func(d *Definition) { d.Label = "\x1b[2JRisk" }, "label", "control character U+001B"},
		{"OSC title in field label", func(d *Definition) { d.Fields[0].Label = "\x1b]0;pwned\x07Level" }, "field_schema[0].label", "control character U+001B"},
		{"C1 CSI in help", func(d *Definition) { d.Fields[0].Help = "a\u009b2Jb" }, "field_schema[0].help", "control character U+009B"},
		{"newline in a label", func(d *Definition) { d.Label = "Risk\nranking" }, "label", "newlines included"},
		{"bidi override in label", func(d *Definition) { d.Label = "Risk \u202eknar" }, "label", "bidirectional control U+202E"},
		{"bidi isolate in option label", func(d *Definition) { d.Fields[0].Options[1].Label = "\u2066High\u2069" }, "field_schema[0].options[1].label", "bidirectional control U+2066"},
		{"ESC in option value", func(d *Definition) { d.Fields[0].Options[1].Value = "hi\x1b[0mgh" }, "field_schema[0].options[1].value", "U+001B"},
		{"long option label", func(d *Definition) { d.Fields[0].Options[0].Label = strings.Repeat("x", 76) }, "field_schema[0].options[0].label", "at most 75"},
		{"long placeholder", func(d *Definition) { d.Fields[0].Placeholder = strings.Repeat("x", 151) }, "field_schema[0].placeholder", "at most 150"},
		{"long field label", func(d *Definition) { d.Fields[0].Label = strings.Repeat("x", 2001) }, "field_schema[0].label", "at most 2000"},
		{"max length above Slack's", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "t", Type: FieldText, Label: "T", MaxLength: 100_000})
		}, "field_schema[2].max_length", "more than 3000"},
		{"invalid UTF-8", func(d *Definition) { d.Description = "a\xffb" }, "description", "not valid UTF-8"},
		{"ESC in a text default", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "t", Type: FieldTextarea, Label: "T", Default: "x\x1b[2Jy"})
		}, "field_schema[2].default", "U+001B"},
		{"10,000 free tags as default", func(d *Definition) {
			tags := make([]any, 10_000)
			for i := range tags {
				tags[i] = fmt.Sprintf("t%d", i)
			}
			d.Fields = append(d.Fields, Field{Key: "t", Type: FieldChips, Label: "T", Default: tags})
		}, "field_schema[2].default", "at most 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := validDef()
			d.Fields[0].Options = append([]Option(nil), d.Fields[0].Options...)
			c.modify(&d)
			ps := DefinitionProblems(d)
			found := false
			for _, p := range ps {
				if p.Path == c.path && strings.Contains(p.Message, c.contains) {
					found = true
				}
			}
			if !found {
				t.Fatalf("problems %v; want one at %s containing %q", ps, c.path, c.contains)
			}
			if len(ps) > 5 {
				t.Errorf("%d problems for one mistake: %v", len(ps), ps[:5])
			}
			if err := ValidateDefinition(d); err == nil {
				t.Fatal("ValidateDefinition accepted it")
			}
			if len(c.name) > 0 && c.path == "label" {
				doc, _ := json.Marshal(DocumentOf(d))
				if _, _, err := ParseDocument(doc); err == nil || !strings.Contains(err.Error(), c.contains) {
					t.Fatalf("ParseDocument: %v; want a problem containing %q", err, c.contains)
				}
			}
		})
	}
}

// TestDefinitionBoundsListedTogether: bound problems come with the others.
func TestDefinitionBoundsListedTogether(t *testing.T) {
	d := validDef()
	d.ID = "Bad Id"
	d.Label = "\x1b[2J" + strings.Repeat("a", 200)
	d.Fields[0].Options = append([]Option(nil), d.Fields[0].Options...)
	d.Fields[0].Options[0].Label = "\u202e"
	got := fmt.Sprint(DefinitionProblems(d))
	for _, want := range []string{"id must be a slug", "label: label holds the control character U+001B", "field_schema[0].options[0].label: options[0].label holds the bidirectional control U+202E"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %s; want %q among them", got, want)
		}
	}
}

// TestDefinitionBoundsAllowMultilineWhereShown: descriptions, help and
// textarea defaults keep their newlines and tabs; emoji joiners stay.
func TestDefinitionBoundsAllowMultilineWhereShown(t *testing.T) {
	d := validDef()
	d.Description = "Rate the risks.\n\n\tOne per line."
	d.Label = "Risk 👩‍💻 ranking"
	d.Fields[1].Help = "1 is low\n5 is high"
	if ps := DefinitionProblems(d); len(ps) > 0 {
		t.Fatalf("refused: %v", ps)
	}
}
