package scheduler

// A user's action before the model is consulted (seed 003 §3, "before
// LLM call"): which actions are refused, the values they set or skip, and the
// review step's Confirm and Change buttons.

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// effect is what a valid action did before the model is consulted.
type effect struct {
	completed bool      // the current data step's field was just given or skipped
	set       SpecField // the field the action set or skipped, if any
	decision  string    // review button: ReviewConfirm or ReviewChange
}

// applyAction validates a and applies it to c (seed 003 §3, "before LLM call").
func applyAction(c Conversation, a ConversationAction) (Conversation, effect, error) {
	var eff effect
	if c.Step == StepComplete {
		return c, eff, &ActionError{Err: ErrFinished, Message: "This stream is already set up; start a new conversation to create another."}
	}
	c = c.clone()
	current, isData := c.Step.Field()
	if a.Kind != ActionTextInput && a.Turn != 0 && a.Turn != c.Last.Number {
		return c, eff, staleChoice()
	}
	switch a.Kind {
	case ActionTextInput:
		text := cleanText(a.Text)
		if text == "" {
			return c, eff, &ActionError{Err: ErrEmptyInput, Message: "I didn't get any text. Type your answer, or use the buttons."}
		}
		if n := utf8.RuneCountInString(text); n > MaxInputLen {
			return c, eff, &ActionError{Err: ErrInputTooLong, Message: fmt.Sprintf("That message is %d characters long; please keep it under %d.", n, MaxInputLen)}
		}
		c.addHistory("user", text)
		return c, eff, nil

	case ActionOptionSelected:
		value := strings.TrimSpace(a.Value)
		if c.Step == StepReview && c.Last.Step == StepReview {
			if value != ReviewConfirm && value != ReviewChange {
				return c, eff, staleChoice()
			}
			c.addHistory("user", value)
			eff.decision = value
			return c, eff, nil
		}
		f := c.Last.TargetField
		if f == "" || !slices.Contains(c.Last.Suggestions, value) {
			return c, eff, staleChoice()
		}
		if err := c.setField(FieldValue{Field: f, Value: value, Values: listOf(f, value)}); err != nil {
			return c, eff, err
		}
		c.addHistory("user", "Selected for "+f.Label()+": "+value)
		eff.set = f
		eff.completed = isData && f == current
		return c, eff, nil

	case ActionOptionsSelected:
		f := c.Last.TargetField
		if f == "" || len(c.Last.Options) == 0 {
			return c, eff, staleChoice()
		}
		var values []string
		for _, v := range a.Values {
			v = strings.TrimSpace(v)
			if !slices.Contains(c.Last.Options, v) {
				return c, eff, staleChoice()
			}
			values = append(values, v)
		}
		if len(values) == 0 {
			msg := "Tick at least one box, or type your own answer."
			if f.Optional() {
				msg = "Tick at least one box, type your own answer, or skip this step."
			}
			return c, eff, &ActionError{Err: ErrEmptyInput, Message: msg}
		}
		if err := c.setField(FieldValue{Field: f, Values: values}); err != nil {
			return c, eff, err
		}
		c.addHistory("user", "Selected for "+f.Label()+": "+strings.Join(values, ", "))
		eff.set = f
		eff.completed = isData && f == current
		return c, eff, nil

	case ActionSkipStep:
		if !isData {
			return c, eff, &ActionError{Err: ErrNothingToSkip, Message: "There is no question to skip right now."}
		}
		d, _ := lookupField(current)
		if !c.skippable(current) {
			return c, eff, &ActionError{Err: ErrRequiredField, Message: fmt.Sprintf(
				"%s is required, so this step can't be skipped. Pick an option or type your answer.", d.label)}
		}
		if d.kind == kindList {
			c.Spec.set(FieldValue{Field: current})
		}
		c.settle(current)
		c.addHistory("user", "Skipped "+d.label)
		eff.set = current
		eff.completed = true
		return c, eff, nil

	case ActionFieldEdit:
		return c.applyFieldEdit(a)
	}
	return c, eff, &ActionError{Err: ErrUnknownAction, Message: "Sorry, I don't know that kind of action."}
}

// skippable reports whether the user may skip f: it is optional and, if it is one of
// the defaulted fields, still has a value to keep.
func (c Conversation) skippable(f SpecField) bool {
	d, ok := lookupField(f)
	return ok && !d.required && (!d.defaulted || c.Spec.has(f))
}

func staleChoice() error {
	return &ActionError{Err: ErrStaleChoice, Message: "That choice isn't on offer any more; please use the buttons on my latest message, or type your answer."}
}

// listOf returns []string{v} when f is a list field, so a single suggestion can fill it.
func listOf(f SpecField, v string) []string {
	if f.IsList() {
		return []string{v}
	}
	return nil
}

// setField validates v and stores it, settling the field. For a list field given as a
// single value (a clicked suggestion), Value is moved into Values.
func (c *Conversation) setField(v FieldValue) error {
	d, ok := lookupField(v.Field)
	if !ok {
		return &ActionError{Err: ErrStaleChoice, Message: "That choice isn't for a field I know."}
	}
	if d.kind == kindList && len(v.Values) > 0 {
		v.Value = ""
	}
	n, err := d.normalize(v)
	if err != nil {
		return &ActionError{Err: err, Message: err.Error() + "."}
	}
	c.Spec.set(n)
	c.settle(v.Field)
	return nil
}

// settle marks f as given or skipped, keeping Settled in workflow order.
func (c *Conversation) settle(f SpecField) {
	if c.IsSettled(f) {
		return
	}
	var out []SpecField
	for _, d := range fieldDefs {
		if d.field == f || c.IsSettled(d.field) {
			out = append(out, d.field)
		}
	}
	c.Settled = out
}

// decide handles the review buttons.
func decide(c Conversation, decision string) (Conversation, Turn, error) {
	if f, ok := strings.CutPrefix(decision, editedPrefix); ok {
		return reviewAgain(c, SpecField(f))
	}
	if decision == ReviewChange {
		c.Step = StepExploration
		t := Turn{Step: StepExploration, Message: "What would you like to change? Tell me in your own words, " +
			"for example \"make it weekly\" or \"add Acme Corp to the competitors\"."}
		t = c.record(t)
		return c, t, nil
	}
	if err := c.Spec.Validate(); err != nil {
		t := c.Last
		t.Message = "I can't create the stream yet: " + err.Error() + ". Choose Change to fix it."
		return c, t, &ActionError{Err: err, Message: t.Message}
	}
	c.Step = StepComplete
	t := Turn{Step: StepComplete, Message: fmt.Sprintf("Done! %q is set up: I'll post a digest %s.",
		c.Spec.Name, c.Spec.Schedule().Describe())}
	t = c.record(t)
	return c, t, nil
}
