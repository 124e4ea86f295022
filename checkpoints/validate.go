package checkpoints

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// scalarString accepts a string (trimmed) or a number (formatted, so that
// options "1".."5" accept 3).
func scalarString(raw any) (string, bool) {
	if s, ok := raw.(string); ok {
		return strings.TrimSpace(s), true
	}
	if _, isBool := raw.(bool); isBool {
		return "", false
	}
	if n, ok := toFloat(raw); ok {
		return formatNumber(n), true
	}
	return "", false
}

// stringList accepts a single string, a []string or a []any of strings or
// numbers, trimming every element.
func stringList(raw any) ([]string, bool) {
	switch x := raw.(type) {
	case string:
		return []string{strings.TrimSpace(x)}, true
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = strings.TrimSpace(s)
		}
		return out, true
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if e == nil {
				continue
			}
			s, ok := scalarString(e)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// matchOption finds s among options: by exact value, else by value or label
// ignoring case. It returns the option's value.
func matchOption(options []Option, s string) (string, bool) {
	for _, o := range options {
		if o.Value == s {
			return o.Value, true
		}
	}
	for _, o := range options {
		if strings.EqualFold(o.Value, s) {
			return o.Value, true
		}
	}
	for _, o := range options {
		if o.Label != "" && strings.EqualFold(o.Label, s) {
			return o.Value, true
		}
	}
	return "", false
}

// toFloat converts Go and JSON numbers and numeric strings to a finite float64.
func toFloat(raw any) (float64, bool) {
	var f float64
	switch x := raw.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case json.Number:
		v, err := x.Float64()
		if err != nil {
			return 0, false
		}
		f = v
	case string:
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, false
		}
		f = v
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// coerce normalises v's type for f when it can and returns v unchanged when it
// cannot. It checks no constraints: it repairs values decoded from JSON
// ([]any → []string) and pre-fills.
func coerce(f Field, v any) any {
	if v == nil {
		return nil
	}
	if multiValued(f) {
		// Keep values that are not options (yet): a pre-fill may precede them.
		if list, ok := stringList(v); ok {
			out := make([]string, 0, len(list))
			for _, s := range list {
				if s != "" && !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
			return out
		}
		return v
	}
	switch f.Type {
	case FieldText, FieldTextarea, FieldSelect, FieldRadio:
		if s, ok := v.(string); ok {
			return strings.TrimSpace(s)
		}
		if f.Type == FieldSelect || f.Type == FieldRadio {
			if s, ok := scalarString(v); ok {
				return s
			}
		}
	case FieldNumber, FieldRange:
		if n, ok := toFloat(v); ok {
			return n
		}
	case FieldCheckbox:
		if out, _, msg := normalize(f, v); msg == "" && out != nil {
			return out
		}
	}
	return v
}

// coerceValues applies coerce to every value whose key names a field; other
// keys are copied unchanged. It returns a new map (nil for nil).
func coerceValues(fields []Field, values map[string]any) map[string]any {
	if values == nil {
		return nil
	}
	out := make(map[string]any, len(values))
	for k, v := range values {
		if f, ok := fieldByKey(fields, k); ok {
			v = coerce(f, v)
		}
		out[k] = v
	}
	return out
}

func fieldByKey(fields []Field, key string) (Field, bool) {
	for _, f := range fields {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// isSlug reports whether s has the shape of definition ids, control types,
// modes and field keys: 1 to 64 lower case letters, digits and underscores,
// starting with a letter.
func isSlug(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ValidateDefinition checks that d is well-formed and returns every problem
// joined (errors.Join), or nil. The problems are DefinitionProblems', each
// on its own line prefixed by the definition's id (and the field's key for a
// field's problem).
func ValidateDefinition(d Definition) error {
	var errs []error
	for _, p := range definitionProblems(d) {
		msg := p.Message
		if p.field != "" {
			msg = fmt.Sprintf("field %q: %s", p.field, msg)
		}
		errs = append(errs, fmt.Errorf("checkpoint definition %q: %s", d.ID, msg))
	}
	return errors.Join(errs...)
}

// Problem is one thing wrong with a definition, at the JSON path of the
// definition document (Document) where it can be fixed, e.g.
// "field_schema[2].options[1].value".
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	field   string // the field's key (or "#n"), for ValidateDefinition's wording
}

// String is "path: message".
func (p Problem) String() string { return p.Path + ": " + p.Message }

// DefinitionProblems lists every problem with d, in document order. It
// checks: id and control type are slugs (lower case letters, digits,
// underscores, starting with a letter, at most 64), a label, a known
// position, at least one mode, known and unique actions, an Edit action only
// with fields, non-negative timeout and retries, a reminder policy within its
// bounds (reminderProblems), a breaker window when a
// breaker threshold is set, and every field: a slug key unique in the form,
// a label, a known type, options (non-empty, unique values) exactly where the
// type uses them — select, radio and multi_select need some unless
// RuntimeOptions says they are filled in per run — bounds only where they
// apply (range needs both; multi-valued bounds are non-negative whole
// counts), min <= max, MaxLength only on text types and not negative, and a
// default that passes the field's own validation.
func DefinitionProblems(d Definition) []Problem {
	ps := definitionProblems(d)
	for i := range ps {
		ps[i].field = ""
	}
	return ps
}

func definitionProblems(d Definition) []Problem {
	var problems []Problem
	add := func(path, format string, args ...any) {
		problems = append(problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if !isSlug(d.ID) {
		add("id", "id must be a slug (lower case letters, digits and underscores, starting with a letter, at most 64)")
	}
	if !isSlug(d.ControlType) {
		add("control_type", "control type %q must be a slug", d.ControlType)
	}
	if strings.TrimSpace(d.Label) == "" {
		add("label", "label is empty")
	}
	problems = append(problems, boundProblems(d)...)
	if !slices.Contains(positions(), d.Position) {
		add("pipeline_position", "unknown position %q (one of %s)", d.Position, joinNames(positions()))
	}
	if len(d.Modes) == 0 {
		add("applicable_modes", "no modes: list the modes it applies to, or \"*\"")
	}
	for i, m := range d.Modes[:min(len(d.Modes), MaxModes)] {
		if m != "*" && !isSlug(m) {
			add(fmt.Sprintf("applicable_modes[%d]", i), "mode %q must be a slug or \"*\"", m)
		}
	}
	for i, a := range d.Actions {
		path := fmt.Sprintf("actions[%d]", i)
		if !slices.Contains(allActions(), a) {
			add(path, "unknown action %q (one of %s)", a, joinNames(allActions()))
		} else if slices.Contains(d.Actions[:i], a) {
			add(path, "action %q listed twice", a)
		}
	}
	if d.Allows(Edit) && len(d.Fields) == 0 {
		add("field_schema", "the edit action needs at least one field")
	}
	if d.Timeout < 0 {
		add("timeout_seconds", "timeout %s is negative (0 means no timeout)", d.Timeout)
	}
	switch d.OnTimeout {
	case TimeoutRemind:
	case TimeoutApprove:
		if d.Timeout <= 0 {
			add("on_timeout", "approving on timeout needs a timeout")
		}
		if !d.Allows(Approve) {
			add("on_timeout", "approving on timeout needs the approve action")
		}
	default:
		add("on_timeout", "unknown timeout policy %q (leave it empty to remind, or %q)", d.OnTimeout, TimeoutApprove)
	}
	problems = append(problems, reminderProblems(d)...)
	if d.MaxRetries < 0 {
		add("max_retries", "max retries %d is negative", d.MaxRetries)
	}
	if d.BreakerThreshold < 0 {
		add("circuit_breaker_threshold", "breaker threshold %d is negative (0 means no breaker)", d.BreakerThreshold)
	}
	if d.BreakerWindow < 0 {
		add("circuit_breaker_window_minutes", "breaker window %s is negative", d.BreakerWindow)
	}
	if d.BreakerThreshold > 0 && d.BreakerWindow <= 0 {
		add("circuit_breaker_window_minutes", "a breaker threshold needs a positive breaker window")
	}
	seen := make(map[string]bool, len(d.Fields))
	for i, f := range d.Fields[:min(len(d.Fields), MaxFields)] {
		name := f.Key
		if name == "" {
			name = "#" + strconv.Itoa(i+1)
		}
		prefix := fmt.Sprintf("field_schema[%d]", i)
		for _, p := range fieldProblems(f) {
			p.Path = prefix + p.Path
			p.field = name
			problems = append(problems, p)
		}
		if f.Key != "" && seen[f.Key] {
			problems = append(problems, Problem{Path: prefix + ".key", Message: fmt.Sprintf("field key %q used twice", f.Key)})
		}
		seen[f.Key] = true
	}
	return problems
}

// joinNames lists names for a message: "a, b, c".
func joinNames[S ~string](names []S) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = string(n)
	}
	return strings.Join(parts, ", ")
}

// fieldProblems lists what is wrong with one field definition, with paths
// relative to the field (".options[1].value").
func fieldProblems(f Field) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if !isSlug(f.Key) {
		add(".key", "key must be a slug")
	}
	if strings.TrimSpace(f.Label) == "" {
		add(".label", "label is empty")
	}
	ps = append(ps, fieldBoundProblems(f)...)
	if !slices.Contains(FieldTypes(), f.Type) {
		add(".type", "unknown type %q (one of %s)", f.Type, joinNames(FieldTypes()))
		return ps
	}
	usesOptions := false
	switch f.Type {
	case FieldSelect, FieldRadio, FieldMultiSelect:
		usesOptions = true
		if len(f.Options) == 0 && !f.RuntimeOptions {
			add(".options", "%s needs options (or runtime_options when they are filled in per run)", f.Type)
		}
	case FieldCheckbox, FieldChips:
		usesOptions = true
	}
	if !usesOptions && (len(f.Options) > 0 || f.RuntimeOptions) {
		add(".options", "%s takes no options", f.Type)
	}
	for i, o := range f.Options[:min(len(f.Options), MaxOptions)] {
		path := fmt.Sprintf(".options[%d].value", i)
		switch {
		case strings.TrimSpace(o.Value) == "":
			add(path, "option %d has an empty value", i+1)
		case slices.ContainsFunc(f.Options[:i], func(p Option) bool { return p.Value == o.Value }):
			add(path, "option %q listed twice", o.Value)
		}
	}
	hasBounds := f.Min != nil || f.Max != nil
	switch {
	case f.Type == FieldRange:
		if f.Min == nil || f.Max == nil {
			add(boundPath(f.Min == nil), "range needs both min and max")
		}
	case multiValued(f):
		for _, b := range []*float64{f.Min, f.Max} {
			if b != nil && (*b < 0 || *b != math.Trunc(*b)) {
				add(boundPath(b == f.Min), "min and max of a multi-valued field count choices: use whole numbers >= 0")
				break
			}
		}
	case f.Type == FieldNumber:
	case hasBounds:
		add(boundPath(f.Min != nil), "%s takes no min or max", f.Type)
	}
	for _, b := range []*float64{f.Min, f.Max} {
		if b != nil && (math.IsNaN(*b) || math.IsInf(*b, 0)) {
			add(boundPath(b == f.Min), "min and max must be finite numbers")
			break
		}
	}
	if f.Min != nil && f.Max != nil && *f.Min > *f.Max {
		add(".min", "min %s is greater than max %s", formatNumber(*f.Min), formatNumber(*f.Max))
	}
	if f.MaxLength < 0 {
		add(".max_length", "max length is negative")
	} else if f.MaxLength > 0 && f.Type != FieldText && f.Type != FieldTextarea {
		add(".max_length", "%s takes no max length", f.Type)
	}
	if f.Default != nil && len(ps) == 0 && !(f.RuntimeOptions && len(f.Options) == 0) {
		probe := f
		probe.Required = false
		if _, errs := Validate([]Field{probe}, map[string]any{f.Key: f.Default}); len(errs) > 0 {
			add(".default", "default is invalid: %s", errs[0].Message)
		}
	}
	return ps
}

// boundPath names the bound a problem is about: min when isMin, else max.
func boundPath(isMin bool) string {
	if isMin {
		return ".min"
	}
	return ".max"
}

// positions lists every pipeline position, in pipeline order.
func positions() []Position {
	return []Position{AfterPlanning, AfterSearch, AfterReview, BeforeOutput}
}

func allActions() []Action { return []Action{Approve, Edit, Reject} }
