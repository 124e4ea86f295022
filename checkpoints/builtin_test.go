package checkpoints

import (
	"reflect"
	"testing"
	"time"
)

func TestBuiltins(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	type want struct {
		label          string
		pos            Position
		modes          []string
		required       bool
		timeout        time.Duration
		retries        int
		fields         map[string]FieldType
		requiredFields []string
	}
	wants := map[string]want{
		PlanReview: {"Research plan", AfterPlanning, []string{ModeGuided, ModeFull}, true, 24 * time.Hour, 3,
			map[string]FieldType{"sub_questions": FieldTextarea, "queries": FieldTextarea, "sections": FieldTextarea, "depth": FieldSelect, "note": FieldTextarea},
			[]string{"sub_questions", "queries"}},
		SourceReview: {"Sources", AfterSearch, []string{ModeFull}, true, 24 * time.Hour, 3,
			map[string]FieldType{"relevant": FieldMultiSelect, "exclude": FieldMultiSelect, "feedback": FieldTextarea}, nil},
		CriticalIssues: {"Critical issues found", AfterReview, []string{ModeGuided, ModeFull}, false, 2 * time.Hour, 1,
			map[string]FieldType{"guidance": FieldTextarea}, nil},
		DraftReview: {"Draft review", BeforeOutput, []string{ModeGuided, ModeFull}, true, 48 * time.Hour, 3,
			map[string]FieldType{"title": FieldText, "changes": FieldTextarea, "readings": FieldCheckbox, "reading_note": FieldTextarea}, nil},
		Clarify: {"Clarifying questions", AfterPlanning, []string{ModeGuided, ModeFull}, false, time.Hour, 1,
			map[string]FieldType{"answer_1": FieldTextarea, "answer_2": FieldTextarea, "answer_3": FieldTextarea, "reply": FieldTextarea}, nil},
	}
	defs := Builtins(now)
	if len(defs) != len(wants) {
		t.Fatalf("%d builtins, want %d", len(defs), len(wants))
	}
	for _, d := range defs {
		w, ok := wants[d.ID]
		if !ok {
			t.Fatalf("unexpected builtin %q", d.ID)
		}
		if d.ControlType != d.ID || d.Label != w.label || d.Position != w.pos || !reflect.DeepEqual(d.Modes, w.modes) ||
			d.Required != w.required || d.Timeout != w.timeout || d.MaxRetries != w.retries {
			t.Errorf("%s = %+v, want %+v", d.ID, d, w)
		}
		if !d.Enabled || !d.CreatedAt.Equal(now) || !d.UpdatedAt.Equal(now) || d.Description == "" {
			t.Errorf("%s: enabled %v created %v updated %v", d.ID, d.Enabled, d.CreatedAt, d.UpdatedAt)
		}
		actions := []Action{Approve, Edit, Reject}
		if d.ID == Clarify {
			// Answer (edit), or skip it (it is optional, and so is skipped
			// when it times out); nothing to approve or reject.
			actions = []Action{Edit}
			if d.Allows(Approve) || d.Allows(Reject) || d.OnTimeout != TimeoutRemind || d.Required {
				t.Errorf("clarify allows approve %v, reject %v, on timeout %q, required %v: want only edit, optional, skipped on timeout",
					d.Allows(Approve), d.Allows(Reject), d.OnTimeout, d.Required)
			}
		}
		if ps := DefinitionProblems(d); len(ps) > 0 {
			t.Errorf("%s: %v", d.ID, ps)
		}
		for _, a := range actions {
			if !d.Allows(a) {
				t.Errorf("%s does not allow %s", d.ID, a)
			}
		}
		if d.BreakerThreshold <= 0 || d.BreakerWindow <= 0 {
			t.Errorf("%s has no breaker", d.ID)
		}
		got := map[string]FieldType{}
		var req []string
		for _, f := range d.Fields {
			got[f.Key] = f.Type
			if f.Required {
				req = append(req, f.Key)
			}
		}
		if !reflect.DeepEqual(got, w.fields) || !reflect.DeepEqual(req, w.requiredFields) {
			t.Errorf("%s fields = %v required %v, want %v required %v", d.ID, got, req, w.fields, w.requiredFields)
		}
	}
	plan := defs[0]
	if plan.ID != PlanReview || plan.SortOrder != 10 || plan.BreakerThreshold != 5 || plan.BreakerWindow != time.Hour {
		t.Errorf("plan_review sort %d breaker %d/%s", plan.SortOrder, plan.BreakerThreshold, plan.BreakerWindow)
	}
	// Fresh values on every call.
	defs[0].Fields[0].Label = "changed"
	if Builtins(now)[0].Fields[0].Label == "changed" {
		t.Error("Builtins shares state between calls")
	}
}

func TestSourceReviewOptionsResolvedPerRun(t *testing.T) {
	var def Definition
	for _, d := range Builtins(t0) {
		if d.ID == SourceReview {
			def = d
		}
	}
	// Without resolved options no source can be chosen.
	bare := NewInstance(def, "ck", "run", nil, nil, nil, t0)
	if _, errs := Validate(bare.Fields, map[string]any{"relevant": []string{"s1"}}); len(errs) != 1 {
		t.Fatalf("choice without options accepted: %v", errs)
	}
	fields := cloneFields(def.Fields)
	opts := []Option{{Value: "s1", Label: "Paper one"}, {Value: "s2", Label: "Paper two"}}
	fields[0].Options, fields[1].Options = opts, opts
	in := NewInstance(def, "ck", "run", nil, fields, nil, t0)
	if err := in.Offer(t0, "bot"); err != nil {
		t.Fatal(err)
	}
	err := in.Decide(Decision{Action: Edit, By: "U1", At: t0.Add(time.Minute), Values: map[string]any{"relevant": []any{"s1"}, "exclude": "Paper two"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"relevant": []string{"s1"}, "exclude": []string{"s2"}}
	if !reflect.DeepEqual(in.Decision.Values, want) {
		t.Fatalf("decision values = %#v, want %#v", in.Decision.Values, want)
	}
}
