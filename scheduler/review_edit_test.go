package scheduler

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// atReview returns a complete conversation at a real review turn.
func atReview(t *testing.T) Conversation {
	t.Helper()
	c, turn, err := Apply(complete(t), ConversationAction{Kind: ActionTextInput, Text: "looks done"}, goTo(StepReview))
	if err != nil || turn.Step != StepReview {
		t.Fatalf("reaching the review: %v, %+v", err, turn)
	}
	return c
}

// TestFieldEditAtReview: one field is edited inline at the review; the
// review is shown again with the new value, no model is needed, and the
// other fields are kept.
func TestFieldEditAtReview(t *testing.T) {
	c := atReview(t)
	a := ConversationAction{Kind: ActionFieldEdit, Field: FieldKeywords, Text: "MC4R agonist\nsetmelanotide\n\nmc4r AGONIST", Turn: c.Last.Number}
	if NeedsModel(c, a) {
		t.Error("an inline edit asks the model")
	}
	next, turn, err := Apply(c, a, Proposal{})
	if err != nil {
		t.Fatal(err)
	}
	if next.Step != StepReview || turn.Step != StepReview || !slices.Equal(turn.Suggestions, []string{ReviewConfirm, ReviewChange}) {
		t.Fatalf("after the edit: step %s, turn %+v; want the review again", next.Step, turn)
	}
	if got := next.Spec.Keywords; !slices.Equal(got, []string{"MC4R agonist", "setmelanotide"}) {
		t.Errorf("keywords %q, want the two distinct items", got)
	}
	if !strings.HasPrefix(turn.Message, "Saved Keywords.") || turn.Number != c.Last.Number+1 {
		t.Errorf("turn %d %q", turn.Number, turn.Message)
	}
	var shown string
	for _, l := range turn.Review {
		if l.Field == FieldKeywords {
			shown = l.Value
		}
	}
	if shown != "MC4R agonist, setmelanotide" {
		t.Errorf("the review shows keywords %q", shown)
	}
	if next.Spec.Purpose != c.Spec.Purpose || next.Spec.Name != c.Spec.Name {
		t.Error("another field changed")
	}
	// Comma-separated on one line, and a choice field, as the conversation validates it.
	next, _, err = Apply(next, ConversationAction{Kind: ActionFieldEdit, Field: FieldFocusAreas, Text: "Obesity, Rare disease"}, Proposal{})
	if err != nil || !slices.Equal(next.Spec.FocusAreas, []string{"Obesity", "Rare disease"}) {
		t.Fatalf("focus areas %q, %v", next.Spec.FocusAreas, err)
	}
	next, _, err = Apply(next, ConversationAction{Kind: ActionFieldEdit, Field: FieldReportFrequency, Text: "Monthly"}, Proposal{})
	if err != nil || next.Spec.Frequency != "monthly" {
		t.Fatalf("frequency %q, %v", next.Spec.Frequency, err)
	}
	if !slices.Contains(EditableFields(next), FieldMonthDay) || slices.Contains(EditableFields(next), FieldWeekday) {
		t.Errorf("editable fields %v: a monthly stream shows its day of month, not its weekday", EditableFields(next))
	}
}

// TestFieldEditRefused: an invalid value, an emptied required field, a
// field the review does not show, an edit outside the review and a click
// on an older review are refused with the conversation unchanged.
func TestFieldEditRefused(t *testing.T) {
	c := atReview(t)
	cases := []struct {
		name string
		c    Conversation
		a    ConversationAction
		err  error
		msg  string
	}{
		{"bad choice", c, ConversationAction{Kind: ActionFieldEdit, Field: FieldReportFrequency, Text: "hourly"}, nil, `"hourly" is not one of`},
		{"required emptied", c, ConversationAction{Kind: ActionFieldEdit, Field: FieldPurpose, Text: "  "}, ErrRequiredField, "Purpose is required"},
		{"not shown", c, ConversationAction{Kind: ActionFieldEdit, Field: FieldMonthDay, Text: "3"}, ErrStaleChoice, "isn't on offer"},
		{"not at review", with(t, c, StepExploration), ConversationAction{Kind: ActionFieldEdit, Field: FieldKeywords, Text: "x"}, ErrStaleChoice, "isn't on offer"},
		{"another turn's review", c, ConversationAction{Kind: ActionFieldEdit, Field: FieldKeywords, Text: "x", Turn: c.Last.Number + 1}, ErrStaleChoice, "isn't on offer"},
	}
	for _, tc := range cases {
		next, _, err := Apply(tc.c, tc.a, Proposal{})
		var ae *ActionError
		if !errors.As(err, &ae) || (tc.err != nil && !errors.Is(err, tc.err)) {
			t.Errorf("%s: error %v, want an ActionError (%v)", tc.name, err, tc.err)
			continue
		}
		if !strings.Contains(ae.Message, tc.msg) {
			t.Errorf("%s: message %q, want %q", tc.name, ae.Message, tc.msg)
		}
		if next.Last.Number != tc.c.Last.Number || !slices.Equal(next.Spec.Keywords, tc.c.Spec.Keywords) || next.Spec.Purpose != tc.c.Spec.Purpose {
			t.Errorf("%s: the conversation changed", tc.name)
		}
	}
	// An optional list emptied is cleared.
	next, _, err := Apply(c, ConversationAction{Kind: ActionFieldEdit, Field: FieldCompetitors, Text: ""}, Proposal{})
	if err != nil || len(next.Spec.Competitors) != 0 {
		t.Errorf("competitors %q, %v: want cleared", next.Spec.Competitors, err)
	}
}

// TestFieldInputIsTheCurrentValue: the edit opens with the field's value,
// a list one item per line.
func TestFieldInputIsTheCurrentValue(t *testing.T) {
	c := atReview(t)
	if got := FieldInput(c, FieldKeywords); got != "melanocortin\nMC4R agonist" {
		t.Errorf("keywords input %q", got)
	}
	if got := FieldInput(c, FieldReportFrequency); got != "weekly" {
		t.Errorf("frequency input %q", got)
	}
}
