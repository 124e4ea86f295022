package checkpoints

import (
	"strings"
	"testing"
	"time"
)

func validDef() Definition {
	return Definition{
		ID:               "risk_rank",
		ControlType:      "risk_rank",
		Label:            "Risk ranking",
		Position:         AfterSearch,
		Modes:            []string{"*"},
		Timeout:          time.Hour,
		MaxRetries:       2,
		BreakerThreshold: 5,
		BreakerWindow:    time.Hour,
		Enabled:          true,
		Fields: []Field{
			{Key: "level", Type: FieldSelect, Label: "Level", Options: []Option{{Value: "low", Label: "Low"}, {Value: "high", Label: "High"}}, Default: "low"},
			{Key: "score", Type: FieldRange, Label: "Score", Min: ptr(1), Max: ptr(5), Default: 3.0},
		},
	}
}

func TestValidateDefinitionAcceptsValid(t *testing.T) {
	if err := ValidateDefinition(validDef()); err != nil {
		t.Fatalf("valid definition refused: %v", err)
	}
}

func TestValidateDefinitionAcceptsBuiltins(t *testing.T) {
	defs := Builtins(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if len(defs) != 5 {
		t.Fatalf("got %d builtins, want 5", len(defs))
	}
	for _, d := range defs {
		if err := ValidateDefinition(d); err != nil {
			t.Errorf("builtin %s invalid: %v", d.ID, err)
		}
	}
}

func TestValidateDefinitionCatchesEachProblem(t *testing.T) {
	cases := []struct {
		name   string
		modify func(d *Definition)
		want   string
	}{
		{"empty id", func(d *Definition) { d.ID = "" }, "id must be a slug"},
		{"id with capitals", func(d *Definition) { d.ID = "RiskRank" }, "id must be a slug"},
		{"id starting with digit", func(d *Definition) { d.ID = "1risk" }, "id must be a slug"},
		{"id with dash", func(d *Definition) { d.ID = "risk-rank" }, "id must be a slug"},
		{"id too long", func(d *Definition) { d.ID = strings.Repeat("a", 65) }, "id must be a slug"},
		{"control type", func(d *Definition) { d.ControlType = "Risk Rank" }, "control type"},
		{"label", func(d *Definition) { d.Label = " " }, "label is empty"},
		{"position", func(d *Definition) { d.Position = "after_lunch" }, `unknown position "after_lunch"`},
		{"no modes", func(d *Definition) { d.Modes = nil }, "no modes"},
		{"bad mode", func(d *Definition) { d.Modes = []string{"Guided Mode"} }, `mode "Guided Mode"`},
		{"unknown action", func(d *Definition) { d.Actions = []Action{Approve, "maybe"} }, `unknown action "maybe"`},
		{"duplicate action", func(d *Definition) { d.Actions = []Action{Approve, Approve} }, `action "approve" listed twice`},
		{"edit without fields", func(d *Definition) { d.Fields = nil }, "edit action needs at least one field"},
		{"negative timeout", func(d *Definition) { d.Timeout = -time.Second }, "timeout -1s is negative"},
		{"negative retries", func(d *Definition) { d.MaxRetries = -1 }, "max retries -1 is negative"},
		{"negative threshold", func(d *Definition) { d.BreakerThreshold = -1 }, "breaker threshold -1"},
		{"negative window", func(d *Definition) { d.BreakerWindow = -time.Minute }, "breaker window -1m0s is negative"},
		{"threshold without window", func(d *Definition) { d.BreakerWindow = 0 }, "needs a positive breaker window"},
		{"field key", func(d *Definition) { d.Fields[0].Key = "Level!" }, "key must be a slug"},
		{"field empty key", func(d *Definition) { d.Fields[0].Key = "" }, `field "#1": key must be a slug`},
		{"field label", func(d *Definition) { d.Fields[0].Label = "" }, `field "level": label is empty`},
		{"field type", func(d *Definition) { d.Fields[0].Type = "slider" }, `unknown type "slider"`},
		{"duplicate key", func(d *Definition) { d.Fields[1].Key = "level" }, `field key "level" used twice`},
		{"select without options", func(d *Definition) { d.Fields[0].Options = nil; d.Fields[0].Default = nil }, "select needs options"},
		{"radio without options", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "r", Type: FieldRadio, Label: "R"})
		}, "radio needs options"},
		{"multi_select without options", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "m", Type: FieldMultiSelect, Label: "M"})
		}, "multi_select needs options"},
		{"options on text", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "t", Type: FieldText, Label: "T", Options: []Option{{Value: "a"}}})
		}, "text takes no options"},
		{"runtime options on number", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "n", Type: FieldNumber, Label: "N", RuntimeOptions: true})
		}, "number takes no options"},
		{"empty option value", func(d *Definition) { d.Fields[0].Options[1].Value = " " }, "option 2 has an empty value"},
		{"duplicate option", func(d *Definition) { d.Fields[0].Options[1].Value = "low" }, `option "low" listed twice`},
		{"range without max", func(d *Definition) { d.Fields[1].Max = nil }, "range needs both min and max"},
		{"range min above max", func(d *Definition) { d.Fields[1].Min = ptr(9) }, "min 9 is greater than max 5"},
		{"number min above max", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "n", Type: FieldNumber, Label: "N", Min: ptr(2), Max: ptr(1)})
		}, "min 2 is greater than max 1"},
		{"bounds on text", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "t", Type: FieldText, Label: "T", Max: ptr(3)})
		}, "text takes no min or max"},
		{"fractional pick count", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "c", Type: FieldChips, Label: "C", Max: ptr(1.5)})
		}, "whole numbers"},
		{"negative max length", func(d *Definition) {
			d.Fields = append(d.Fields, Field{Key: "t", Type: FieldText, Label: "T", MaxLength: -1})
		}, "max length is negative"},
		{"max length on select", func(d *Definition) { d.Fields[0].MaxLength = 10 }, "select takes no max length"},
		{"invalid default option", func(d *Definition) { d.Fields[0].Default = "medium" }, `default is invalid: "medium" is not one of the options`},
		{"default out of range", func(d *Definition) { d.Fields[1].Default = 6.0 }, "default is invalid: Must be between 1 and 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := validDef()
			c.modify(&d)
			err := ValidateDefinition(d)
			if err == nil {
				t.Fatalf("accepted, want a problem containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestValidateDefinitionReportsEveryProblem(t *testing.T) {
	d := validDef()
	d.ID = ""
	d.Position = ""
	d.MaxRetries = -2
	err := ValidateDefinition(d)
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d problems, want 3: %q", len(lines), err)
	}
}

func TestValidateDefinitionRuntimeOptions(t *testing.T) {
	d := validDef()
	d.Fields = append(d.Fields, Field{Key: "sources", Type: FieldMultiSelect, Label: "Sources", RuntimeOptions: true, Default: []string{"s1"}})
	if err := ValidateDefinition(d); err != nil {
		t.Fatalf("runtime options refused: %v", err)
	}
}

func TestDefinitionAllows(t *testing.T) {
	cases := []struct {
		actions []Action
		a       Action
		want    bool
	}{
		{nil, Approve, true},
		{nil, Edit, true},
		{nil, Reject, true},
		{nil, "maybe", false},
		{[]Action{Approve, Reject}, Edit, false},
		{[]Action{Approve, Reject}, Reject, true},
	}
	for _, c := range cases {
		if got := (Definition{Actions: c.actions}).Allows(c.a); got != c.want {
			t.Errorf("Allows(%v, %q) = %v, want %v", c.actions, c.a, got, c.want)
		}
	}
}

func TestDefinitionAppliesTo(t *testing.T) {
	cases := []struct {
		modes []string
		mode  string
		want  bool
	}{
		{[]string{ModeGuided, ModeFull}, ModeGuided, true},
		{[]string{ModeGuided, ModeFull}, ModeAuto, false},
		{[]string{ModeFull}, ModeGuided, false},
		{[]string{"*"}, "anything", true},
		{nil, ModeFull, false},
	}
	for _, c := range cases {
		if got := (Definition{Modes: c.modes}).AppliesTo(c.mode); got != c.want {
			t.Errorf("AppliesTo(%v, %q) = %v, want %v", c.modes, c.mode, got, c.want)
		}
	}
}
