package blockkit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
)

// A form that is a list of fields is a list of checkpoint field schemas
// (checkpoints.Field): inputs renders each as an input block whose block id
// is the field's key and whose action id is ValueActionID; ParseSubmission
// reads a view_submission's state.values back into typed values, which the
// checkpoints package validates. The Edit form of a checkpoint, the Reject
// form, the start form and the App Home's definition form are built so.

// Block and action ids inside the forms.
const (
	ValueActionID = "value"       // the action_id of every input element
	StartInput    = ValueActionID // the same, as the start and definition forms name it
	boolOption    = "true"        // the one option of a yes/no checkbox
)

// inputs renders fields as input blocks, in order, each pre-filled from
// values or, without a value there, from the field's Default.
func inputs(fields []checkpoints.Field, values map[string]any) []slack.Block {
	blocks := make([]slack.Block, 0, len(fields))
	for _, f := range fields {
		v, ok := values[f.Key]
		if !ok {
			v = f.Default
		}
		blocks = append(blocks, fieldInput(f, v))
	}
	return blocks
}

// fieldInput renders one field as an input block pre-filled with v. A text
// input has a max_length only when the field sets one (at most Slack's 3000).
func fieldInput(f checkpoints.Field, v any) *slack.InputBlock {
	var el slack.BlockElement
	opts := options(f.Options)
	switch f.Type {
	case checkpoints.FieldText, checkpoints.FieldTextarea:
		t := slack.NewPlainTextInputBlockElement(placeholder(f), ValueActionID)
		t.Multiline = f.Type == checkpoints.FieldTextarea
		t.InitialValue = textValue(v)
		if f.MaxLength > 0 {
			t.MaxLength = min(f.MaxLength, MaxInputLength) // Slack refuses a larger max_length
			t.InitialValue = Truncate(t.InitialValue, t.MaxLength)
		}
		el = t
	case checkpoints.FieldSelect, checkpoints.FieldRadio:
		init := selected(opts, stringsOf(v))
		if f.Type == checkpoints.FieldRadio && len(opts) > 0 && len(opts) <= MaxChoiceOptions {
			r := slack.NewRadioButtonsBlockElement(ValueActionID, opts...)
			if len(init) > 0 {
				r.InitialOption = init[0]
			}
			el = r
		} else {
			s := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, placeholder(f), ValueActionID, opts...)
			if len(init) > 0 {
				s.InitialOption = init[0]
			}
			el = s
		}
	case checkpoints.FieldMultiSelect, checkpoints.FieldChips, checkpoints.FieldCheckbox:
		switch {
		case f.Type == checkpoints.FieldChips && len(opts) == 0:
			t := slack.NewPlainTextInputBlockElement(Plain(FirstNonEmpty(f.Placeholder, "tags, separated by commas"), MaxPlaceholder), ValueActionID)
			t.InitialValue = strings.Join(stringsOf(v), ", ")
			el = t
		case f.Type == checkpoints.FieldCheckbox && len(f.Options) == 0:
			yes := slack.NewOptionBlockObject(boolOption, Plain(FirstNonEmpty(f.Label, "Yes"), MaxOptionText), nil)
			c := slack.NewCheckboxGroupsBlockElement(ValueActionID, yes)
			if b, _ := v.(bool); b || textValue(v) == "true" {
				c.InitialOptions = []*slack.OptionBlockObject{yes}
			}
			el = c
		case f.Type == checkpoints.FieldCheckbox && len(opts) <= MaxChoiceOptions:
			c := slack.NewCheckboxGroupsBlockElement(ValueActionID, opts...)
			c.InitialOptions = selected(opts, stringsOf(v))
			el = c
		default:
			m := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, placeholder(f), ValueActionID, opts...)
			m.InitialOptions = selected(opts, stringsOf(v))
			el = m
		}
	case checkpoints.FieldNumber, checkpoints.FieldRange:
		n := slack.NewNumberInputBlockElement(placeholder(f), ValueActionID, true)
		if f.Min != nil {
			n.MinValue = strconv.FormatFloat(*f.Min, 'f', -1, 64)
		}
		if f.Max != nil {
			n.MaxValue = strconv.FormatFloat(*f.Max, 'f', -1, 64)
		}
		if x, ok := number(v); ok {
			n.InitialValue = strconv.FormatFloat(x, 'f', -1, 64)
		}
		el = n
	default:
		t := slack.NewPlainTextInputBlockElement(placeholder(f), ValueActionID)
		t.InitialValue = Truncate(textValue(v), MaxInputLength)
		el = t
	}
	var hint *slack.TextBlockObject
	if h := strings.TrimSpace(f.Help); h != "" {
		hint = Plain(Truncate(h, MaxInputLabel), MaxInputLabel)
	}
	in := slack.NewInputBlock(f.Key, Plain(FirstNonEmpty(f.Label, f.Key), MaxInputLabel), hint, el)
	in.Optional = !f.Required
	return in
}

// placeholder is a field's placeholder text, or nil.
func placeholder(f checkpoints.Field) *slack.TextBlockObject {
	if strings.TrimSpace(f.Placeholder) == "" {
		return nil
	}
	return Plain(f.Placeholder, MaxPlaceholder)
}

// options renders choices (at most Slack's 100).
func options(in []checkpoints.Option) []*slack.OptionBlockObject {
	out := make([]*slack.OptionBlockObject, 0, min(len(in), MaxOptions))
	for i, o := range in {
		if i == MaxOptions {
			break
		}
		out = append(out, slack.NewOptionBlockObject(Truncate(o.Value, MaxOptionValue), Plain(FirstNonEmpty(o.Label, o.Value), MaxOptionText), nil))
	}
	return out
}

// selected returns the options whose value (or label) is among vals.
func selected(opts []*slack.OptionBlockObject, vals []string) []*slack.OptionBlockObject {
	var out []*slack.OptionBlockObject
	for _, v := range vals {
		for _, o := range opts {
			if o.Value == v || strings.EqualFold(o.Text.Text, v) {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// textValue renders a value as form text: lists one item per line.
func textValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []string:
		return strings.Join(x, "\n")
	case []any:
		return strings.Join(stringsOf(x), "\n")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// stringsOf turns a value into a list of strings.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, textValue(e))
		}
		return out
	}
	return []string{textValue(v)}
}

// number reads a numeric value.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// ParseSubmission turns a submitted form back into field values: text as
// strings, choices as option values, multi-valued fields as []string, a
// yes/no checkbox as a bool, numbers as float64 (text that is not a number is
// kept as text for validation to report). Every field whose block is in the
// state is present; an emptied field is present and empty, so it clears.
func ParseSubmission(fields []checkpoints.Field, state map[string]map[string]slack.BlockAction) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		blk, ok := state[f.Key]
		if !ok {
			continue
		}
		a, ok := blk[ValueActionID]
		if !ok {
			for _, x := range blk {
				a, ok = x, true
				break
			}
		}
		if !ok {
			continue
		}
		switch f.Type {
		case checkpoints.FieldText, checkpoints.FieldTextarea:
			out[f.Key] = a.Value
		case checkpoints.FieldSelect, checkpoints.FieldRadio:
			out[f.Key] = a.SelectedOption.Value
		case checkpoints.FieldMultiSelect:
			out[f.Key] = optionValues(a.SelectedOptions)
		case checkpoints.FieldChips:
			if len(f.Options) == 0 {
				out[f.Key] = splitTags(a.Value)
			} else {
				out[f.Key] = optionValues(a.SelectedOptions)
			}
		case checkpoints.FieldCheckbox:
			if len(f.Options) == 0 {
				out[f.Key] = len(a.SelectedOptions) > 0
			} else {
				out[f.Key] = optionValues(a.SelectedOptions)
			}
		case checkpoints.FieldNumber, checkpoints.FieldRange:
			s := strings.TrimSpace(a.Value)
			if s == "" {
				out[f.Key] = nil
			} else if x, err := strconv.ParseFloat(s, 64); err == nil {
				out[f.Key] = x
			} else {
				out[f.Key] = s
			}
		default:
			out[f.Key] = a.Value
		}
	}
	return out
}

// optionValues lists the values of chosen options.
func optionValues(opts []slack.OptionBlockObject) []string {
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		out = append(out, o.Value)
	}
	return out
}

// splitTags splits free tags on commas and newlines.
func splitTags(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// formValues reads a parsed submission for the hand-written rules of a
// form: raw text, text as shown (Visible, trimmed) and a list of choices
// (never nil).
type formValues map[string]any

func (v formValues) raw(key string) string { s, _ := v[key].(string); return s }

func (v formValues) text(key string) string { return strings.TrimSpace(Visible(v.raw(key))) }

func (v formValues) list(key string) []string {
	l, _ := v[key].([]string)
	return append([]string{}, l...)
}

// ticked is the value of a checkbox of one option: that option when on.
func ticked(on bool, option string) []string {
	if on {
		return []string{option}
	}
	return nil
}
