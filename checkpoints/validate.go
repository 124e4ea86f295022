package checkpoints

// Validation of submitted values against a checkpoint's fields (Validate,
// MissingRequired) and the messages shown next to a field.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// defaultMaxLength bounds text and textarea values, in runes, when a field
// sets no MaxLength.
const defaultMaxLength = 3000

// ValidationError carries field-level problems with submitted values. Its
// Fields are in form order, then unknown keys in key order.
type ValidationError struct {
	Fields []FieldError
}

// Error lists every field problem on one line.
func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Fields))
	for _, fe := range e.Fields {
		parts = append(parts, fe.Key+": "+fe.Message)
	}
	return "checkpoints: invalid values: " + strings.Join(parts, "; ")
}

// Messages shown to people next to a field.
const (
	msgRequired  = "This is required"
	msgToApprove = "This is required before approving: fill it in with Edit"
	msgUnknown   = "This is not a field of this form"
	msgText      = "Must be text"
	msgChoice    = "Choose one of the options"
	msgChoices   = "Must be a list of choices"
	msgBool      = "Must be yes or no (true or false)"
	msgChecked   = "Must be checked"
	msgNumber    = "Must be a number"
	msgNoBounds  = "This range has no minimum and maximum set; ask an admin to fix the checkpoint"
	msgBadType   = "This field has an unsupported type; ask an admin to fix the checkpoint"
	msgNotOption = "%q is not one of the options"
)

// Validate checks values against fields and returns the normalised values,
// or nil and every field problem.
//
// Normalisation: strings are trimmed; JSON-decoded numbers (and integers,
// json.Number or numeric strings) become float64; a multi-valued field
// (multi_select, checkbox with options, chips) accepts a single string, a
// []string or a []any of strings and yields a de-duplicated []string; a
// bare checkbox accepts a bool, "true"/"false" or "yes"/"no" ("y"/"n")
// and yields a bool; select,
// radio and multi-valued choices match an option's value exactly, else its
// value or label case-insensitively, and yield the option's value.
//
// A value that is nil, blank or an empty list counts as absent: a required
// field then reports "This is required" and an optional one is left out of
// the result. A required bare checkbox must be true. Min and Max bound a
// number or range (a range needs both) and, on multi-valued fields, the
// number of choices. Text and textarea values are limited to MaxLength runes
// (3000 when 0). Keys that name no field are reported.
func Validate(fields []Field, values map[string]any) (map[string]any, []FieldError) {
	out := make(map[string]any, len(fields))
	var errs []FieldError
	known := make(map[string]bool, len(fields))
	for _, f := range fields {
		known[f.Key] = true
		raw, present := values[f.Key]
		v, empty, msg := normalize(f, raw)
		if msg == "" && (!present || empty) {
			if f.Required {
				msg = msgRequired
			} else {
				continue
			}
		}
		if msg == "" {
			msg = check(f, v)
		}
		if msg != "" {
			errs = append(errs, FieldError{Key: f.Key, Message: msg})
			continue
		}
		out[f.Key] = v
	}
	var unknown []string
	for k := range values {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		errs = append(errs, FieldError{Key: k, Message: msgUnknown})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// MissingRequired returns a problem for each required field that values
// leave empty (a required bare checkbox: unchecked), in form order: what
// stops an Approve, which accepts the values as they are.
func MissingRequired(fields []Field, values map[string]any) []FieldError {
	var errs []FieldError
	for _, f := range fields {
		if !f.Required {
			continue
		}
		v, empty, msg := normalize(f, values[f.Key])
		if msg == "" && !empty {
			msg = check(f, v)
		}
		if empty || msg == msgChecked {
			errs = append(errs, FieldError{Key: f.Key, Message: msgToApprove})
		}
	}
	return errs
}

// multiValued reports whether f's value is a []string.
func multiValued(f Field) bool {
	switch f.Type {
	case FieldMultiSelect, FieldChips:
		return true
	case FieldCheckbox:
		return len(f.Options) > 0 || f.RuntimeOptions
	}
	return false
}

// normalize converts raw to the field's value type. It reports whether the
// value is empty (absent) and a message when raw has the wrong type or names
// an option that does not exist. It does not check bounds or lengths.
func normalize(f Field, raw any) (v any, empty bool, msg string) {
	if raw == nil {
		return nil, true, ""
	}
	switch {
	case f.Type == FieldText || f.Type == FieldTextarea:
		s, ok := raw.(string)
		if !ok {
			return nil, false, msgText
		}
		s = strings.TrimSpace(s)
		return s, s == "", ""
	case f.Type == FieldSelect || f.Type == FieldRadio:
		s, ok := scalarString(raw)
		if !ok {
			return nil, false, msgChoice
		}
		if s == "" {
			return s, true, ""
		}
		val, ok := matchOption(f.Options, s)
		if !ok {
			return nil, false, fmt.Sprintf(msgNotOption, s)
		}
		return val, false, ""
	case multiValued(f):
		items, ok := stringList(raw)
		if !ok {
			return nil, false, msgChoices
		}
		list := make([]string, 0, len(items))
		for _, s := range items {
			if s == "" {
				continue
			}
			if len(f.Options) > 0 || f.Type != FieldChips {
				val, ok := matchOption(f.Options, s)
				if !ok {
					return nil, false, fmt.Sprintf(msgNotOption, s)
				}
				s = val
			}
			if !slices.Contains(list, s) {
				list = append(list, s)
			}
		}
		return list, len(list) == 0, ""
	case f.Type == FieldCheckbox:
		switch b := raw.(type) {
		case bool:
			return b, false, ""
		case string:
			switch strings.ToLower(strings.TrimSpace(b)) {
			case "true", "yes", "y":
				return true, false, ""
			case "false", "no", "n":
				return false, false, ""
			case "":
				return nil, true, ""
			}
		}
		return nil, false, msgBool
	case f.Type == FieldNumber || f.Type == FieldRange:
		if s, ok := raw.(string); ok && strings.TrimSpace(s) == "" {
			return nil, true, ""
		}
		n, ok := toFloat(raw)
		if !ok {
			return nil, false, msgNumber
		}
		return n, false, ""
	}
	return nil, false, msgBadType
}

// check applies a field's bounds and lengths to a normalised, non-empty value.
func check(f Field, v any) string {
	switch f.Type {
	case FieldText, FieldTextarea:
		limit := f.MaxLength
		if limit <= 0 {
			limit = defaultMaxLength
		}
		if n := utf8.RuneCountInString(v.(string)); n > limit {
			return fmt.Sprintf("Must be at most %d characters (this is %d)", limit, n)
		}
	case FieldNumber, FieldRange:
		if f.Type == FieldRange && (f.Min == nil || f.Max == nil) {
			return msgNoBounds
		}
		n := v.(float64)
		if (f.Min != nil && n < *f.Min) || (f.Max != nil && n > *f.Max) {
			return boundsMessage("Must be", f.Min, f.Max)
		}
	case FieldCheckbox:
		if b, ok := v.(bool); ok && f.Required && !b {
			return msgChecked
		}
	}
	if list, ok := v.([]string); ok {
		n := float64(len(list))
		if (f.Min != nil && n < *f.Min) || (f.Max != nil && n > *f.Max) {
			return boundsMessage("Pick", f.Min, f.Max)
		}
	}
	return ""
}

// boundsMessage says which bounds a value must respect: "Must be between 1
// and 10", "Pick at most 3".
func boundsMessage(verb string, lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		if verb == "Pick" {
			return "Pick exactly " + formatNumber(*lo)
		}
		return verb + " exactly " + formatNumber(*lo)
	case lo != nil && hi != nil:
		return verb + " between " + formatNumber(*lo) + " and " + formatNumber(*hi)
	case lo != nil:
		return verb + " at least " + formatNumber(*lo)
	default:
		return verb + " at most " + formatNumber(*hi)
	}
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
