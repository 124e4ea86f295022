package checkpoints

// Whether a checkpoint Definition is well-formed: ValidateDefinition and
// DefinitionProblems, every problem at the JSON path where it can be fixed.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

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
