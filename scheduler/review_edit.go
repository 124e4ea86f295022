package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Per-field inline edit at the review (seed 003: "User can update any field
// via chat or inline editing"): at the review step each field of the
// configuration can be edited on its own, without leaving the review. The
// new value is validated as the conversation validates an answer; the
// conversation stays at the review, which is shown again with the value.
// No model is asked.

// editedPrefix marks the effect of a field edit (effect.decision), followed
// by the field.
const editedPrefix = "edited:"

// EditableFields returns the fields the review of c lets the user edit
// inline, in the review's order; none outside the review.
func EditableFields(c Conversation) []SpecField {
	if c.Step != StepReview || c.Last.Step != StepReview {
		return nil
	}
	var out []SpecField
	for _, l := range c.Spec.ReviewLines() {
		if l.Field != "" {
			out = append(out, l.Field)
		}
	}
	return out
}

// FieldInput returns f's current value as the text of its inline edit: a
// list field's items one per line.
func FieldInput(c Conversation, f SpecField) string {
	v := c.Spec.get(f)
	if f.IsList() {
		return strings.Join(v.Values, "\n")
	}
	return v.Value
}

// applyFieldEdit applies a field_edit action: the field must be one the
// review shows, and its value valid; a list takes one item per line (or
// comma-separated items on one line); an optional field left empty is
// cleared, or kept at its default.
func (c Conversation) applyFieldEdit(a ConversationAction) (Conversation, effect, error) {
	var eff effect
	if !slices.Contains(EditableFields(c), a.Field) {
		return c, eff, staleChoice()
	}
	d, _ := lookupField(a.Field)
	text := strings.TrimSpace(a.Text)
	if n := utf8.RuneCountInString(text); n > MaxInputLen {
		return c, eff, &ActionError{Err: ErrInputTooLong, Message: fmt.Sprintf("That is %d characters long; please keep it under %d.", n, MaxInputLen)}
	}
	switch {
	case text == "" && !d.required && d.kind == kindList:
		c.Spec.set(FieldValue{Field: a.Field})
		c.settle(a.Field)
		c.addHistory("user", "Cleared "+d.label+" at the review")
	case text == "" && !d.required && d.defaulted:
		c.addHistory("user", "Kept "+d.label+" at the review")
	case text == "":
		return c, eff, &ActionError{Err: ErrRequiredField, Message: d.label + " is required: give it a value."}
	default:
		v := FieldValue{Field: a.Field, Value: text}
		if d.kind == kindList {
			v = FieldValue{Field: a.Field, Values: listItems(text)}
		}
		if err := c.setField(v); err != nil {
			return c, eff, err
		}
		c.addHistory("user", "Edited at the review: "+d.label+": "+strings.Join(strings.Fields(FieldInput(c, a.Field)), " "))
	}
	eff.set = a.Field
	eff.decision = editedPrefix + string(a.Field)
	return c, eff, nil
}

// listItems splits a list field's text: one item per line, or, when it is
// one line, comma-separated items.
func listItems(text string) []string {
	if strings.Contains(text, "\n") {
		return strings.Split(text, "\n")
	}
	return strings.Split(text, ",")
}

// reviewAgain is the review after field f was edited inline.
func reviewAgain(c Conversation, f SpecField) (Conversation, Turn, error) {
	t := Turn{
		Step:        StepReview,
		Message:     "Saved " + f.Label() + ". Here is the configuration again: choose Confirm to create the stream, Change to talk it over, or Edit beside a field to change just that one.",
		Suggestions: []string{ReviewConfirm, ReviewChange},
		Review:      c.Spec.ReviewLines(),
	}
	if c.Editing != "" {
		t.Message = "Saved " + f.Label() + ". Here are the stream's settings again: choose Confirm to save the changes, Change to talk it over, or Edit beside a field to change just that one."
	}
	return c, c.record(t), nil
}

// FieldChoices returns the values f accepts when it is a choice field
// (type, frequency, weekday), for the inline edit's hint; nil otherwise.
func FieldChoices(f SpecField) []string {
	if d, ok := lookupField(f); ok && d.kind == kindChoice {
		return slices.Clone(d.choices)
	}
	return nil
}
