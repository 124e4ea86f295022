package checkpoints

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Defaults of a definition document (seed 004's CheckpointDefinitionCreate)
// for the keys it leaves out.
const (
	DefaultMaxRetries       = 2
	DefaultBreakerThreshold = 5
	DefaultBreakerWindow    = 60 * time.Minute
)

// Document is a definition in seed 004's JSON shape: what an admin writes
// (researchbot checkpoints create/update) and reads (show). Durations are
// whole seconds (timeout) and minutes (breaker window); created_at and
// updated_at are shown but never read.
type Document struct {
	ID                          string        `json:"id,omitempty"`
	ControlType                 string        `json:"control_type"`
	Label                       string        `json:"label"`
	Description                 string        `json:"description"`
	FieldSchema                 []Field       `json:"field_schema"`
	PipelinePosition            Position      `json:"pipeline_position"`
	SortOrder                   int           `json:"sort_order"`
	ApplicableModes             []string      `json:"applicable_modes"`
	Actions                     []Action      `json:"actions,omitempty"`
	Required                    bool          `json:"required"`
	TimeoutSeconds              *int64        `json:"timeout_seconds"`
	OnTimeout                   TimeoutPolicy `json:"on_timeout,omitempty"`
	Reminders                   *RemindersDoc `json:"reminders,omitempty"`
	MaxRetries                  *int          `json:"max_retries"`
	CircuitBreakerThreshold     *int          `json:"circuit_breaker_threshold"`
	CircuitBreakerWindowMinutes *int64        `json:"circuit_breaker_window_minutes"`
	Enabled                     *bool         `json:"enabled,omitempty"`
	CreatedAt                   *time.Time    `json:"created_at,omitempty"`
	UpdatedAt                   *time.Time    `json:"updated_at,omitempty"`
}

// DocumentOf returns d in seed 004's shape.
func DocumentOf(d Definition) Document {
	doc := Document{
		ID: d.ID, ControlType: d.ControlType, Label: d.Label, Description: d.Description,
		FieldSchema: d.Fields, PipelinePosition: d.Position, SortOrder: d.SortOrder,
		ApplicableModes: d.Modes, Actions: d.Actions, Required: d.Required, OnTimeout: d.OnTimeout,
		MaxRetries: &d.MaxRetries, CircuitBreakerThreshold: &d.BreakerThreshold,
		Enabled: &d.Enabled,
	}
	if doc.FieldSchema == nil {
		doc.FieldSchema = []Field{}
	}
	if d.Timeout > 0 {
		s := int64(d.Timeout / time.Second)
		doc.TimeoutSeconds = &s
	}
	doc.Reminders = remindersDocOf(d.ReminderPolicy())
	w := int64(d.BreakerWindow / time.Minute)
	doc.CircuitBreakerWindowMinutes = &w
	if !d.CreatedAt.IsZero() {
		doc.CreatedAt = &d.CreatedAt
	}
	if !d.UpdatedAt.IsZero() {
		doc.UpdatedAt = &d.UpdatedAt
	}
	return doc
}

// Definition converts the document, filling in seed 004's defaults: id =
// control_type, modes ["*"], 2 retries, a breaker of 5 failures in 60
// minutes, enabled; and researchbot's: the default reminder policy, and its
// values for the keys of "reminders" left out. It validates nothing.
func (doc Document) Definition() Definition {
	d := Definition{
		ID: doc.ID, ControlType: doc.ControlType, Label: strings.TrimSpace(doc.Label),
		Description: strings.TrimSpace(doc.Description), Fields: doc.FieldSchema,
		Position: doc.PipelinePosition, SortOrder: doc.SortOrder, Modes: doc.ApplicableModes,
		Actions: doc.Actions, Required: doc.Required, OnTimeout: doc.OnTimeout, MaxRetries: DefaultMaxRetries,
		BreakerThreshold: DefaultBreakerThreshold, BreakerWindow: DefaultBreakerWindow, Enabled: true,
	}
	d.ID = cmp.Or(d.ID, d.ControlType)
	if d.Modes == nil {
		d.Modes = []string{"*"}
	}
	if doc.TimeoutSeconds != nil {
		d.Timeout = time.Duration(*doc.TimeoutSeconds) * time.Second
	}
	if doc.Reminders != nil {
		// The default stated in full is the default: a definition follows
		// DefaultReminders unless it says otherwise.
		if p := doc.Reminders.policy(); p != DefaultReminders() {
			d.Reminders = &p
		}
	}
	if doc.MaxRetries != nil {
		d.MaxRetries = *doc.MaxRetries
	}
	if doc.CircuitBreakerThreshold != nil {
		d.BreakerThreshold = *doc.CircuitBreakerThreshold
	}
	if doc.CircuitBreakerWindowMinutes != nil {
		d.BreakerWindow = time.Duration(*doc.CircuitBreakerWindowMinutes) * time.Minute
	}
	if doc.Enabled != nil {
		d.Enabled = *doc.Enabled
	}
	return d
}

// DocumentError lists every problem with a definition document.
type DocumentError struct {
	Problems []Problem
}

// Error lists the problems, one per line.
func (e *DocumentError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ParseDocument reads a definition document and returns the document as
// written (so a caller can tell which optional keys were given) and its
// definition, or a *DocumentError with every problem at once, each at its
// JSON path: malformed JSON, keys that are not part of the shape, values of
// the wrong type, and whatever DefinitionProblems finds.
func ParseDocument(data []byte) (Document, Definition, error) {
	var doc Document
	if !json.Valid(data) {
		return doc, Definition{}, &DocumentError{Problems: []Problem{{Path: "$", Message: syntaxMessage(data)}}}
	}
	ps := decodeDocument(data, &doc)
	d := doc.Definition()
	// What the decoder could read is checked too, except where it already
	// found a problem: every problem is listed at once.
	for _, p := range DefinitionProblems(d) {
		if !slices.ContainsFunc(ps, func(q Problem) bool { return within(p.Path, q.Path) }) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return doc, Definition{}, &DocumentError{Problems: ps}
	}
	return doc, d, nil
}

// within reports whether path is at or under parent.
func within(path, parent string) bool {
	return path == parent || strings.HasPrefix(path, parent+".") || strings.HasPrefix(path, parent+"[")
}

// syntaxMessage says where JSON that is not valid goes wrong.
func syntaxMessage(data []byte) string {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:se.Offset], []byte("\n"))
		col := se.Offset - int64(bytes.LastIndexByte(data[:se.Offset], '\n')) - 1
		return fmt.Sprintf("not valid JSON: %v (line %d, column %d)", se, line, col)
	}
	if err == nil {
		return "not valid JSON"
	}
	return "not valid JSON: " + err.Error()
}

// decodeDocument decodes data into doc key by key, so that every unknown key
// and every value of the wrong type is reported with its path.
func decodeDocument(data []byte, doc *Document) []Problem {
	ps := decodeObject("", data, map[string]any{
		"id": &doc.ID, "control_type": &doc.ControlType, "label": &doc.Label,
		"description": &doc.Description, "pipeline_position": &doc.PipelinePosition,
		"sort_order": &doc.SortOrder, "applicable_modes": &doc.ApplicableModes,
		"actions": &doc.Actions, "required": &doc.Required, "timeout_seconds": &doc.TimeoutSeconds,
		"on_timeout": &doc.OnTimeout,
		"reminders": listDecoder(func(raw []byte) []Problem {
			doc.Reminders = &RemindersDoc{}
			return decodeReminders(raw, doc.Reminders)
		}),
		"max_retries": &doc.MaxRetries, "circuit_breaker_threshold": &doc.CircuitBreakerThreshold,
		"circuit_breaker_window_minutes": &doc.CircuitBreakerWindowMinutes, "enabled": &doc.Enabled,
		"created_at": new(json.RawMessage), "updated_at": new(json.RawMessage),
		"field_schema": listOf("field_schema", &doc.FieldSchema, decodeField),
	})
	return ps
}

// decodeField decodes one element of field_schema.
func decodeField(path string, raw []byte, f *Field) []Problem {
	return decodeObject(path, raw, map[string]any{
		"key": &f.Key, "type": &f.Type, "label": &f.Label, "help": &f.Help,
		"required": &f.Required, "placeholder": &f.Placeholder, "min": &f.Min, "max": &f.Max,
		"max_length": &f.MaxLength, "default": &f.Default, "runtime_options": &f.RuntimeOptions,
		"options": listOf(path+".options", &f.Options, func(path string, raw []byte, o *Option) []Problem {
			return decodeObject(path, raw, map[string]any{"value": &o.Value, "label": &o.Label})
		}),
	})
}

// listDecoder decodes a JSON list element by element.
type listDecoder func(raw []byte) []Problem

// listOf returns a decoder of a JSON list into *dst, each element by elem.
func listOf[T any](path string, dst *[]T, elem func(path string, raw []byte, v *T) []Problem) listDecoder {
	return func(raw []byte) []Problem {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return []Problem{{Path: path, Message: "must be a list"}}
		}
		if items == nil {
			*dst = nil
			return nil
		}
		*dst = make([]T, len(items))
		var ps []Problem
		for i, item := range items {
			ps = append(ps, elem(fmt.Sprintf("%s[%d]", path, i), item, &(*dst)[i])...)
		}
		return ps
	}
}

// decodeObject decodes a JSON object whose keys are those of targets: a
// pointer to decode the value into, or a listDecoder. Unknown keys and
// values of the wrong type are problems; decoding goes on past them.
func decodeObject(path string, raw []byte, targets map[string]any) []Problem {
	at := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		p := path
		p = cmp.Or(p, "$")
		return []Problem{{Path: p, Message: "must be an object"}}
	}
	known := slices.Sorted(maps.Keys(targets))
	var ps []Problem
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		switch t := targets[k].(type) {
		case nil:
			ps = append(ps, Problem{Path: at(k), Message: "unknown key (known keys: " + strings.Join(known, ", ") + ")"})
		case listDecoder:
			if string(obj[k]) == "null" {
				continue
			}
			ps = append(ps, t(obj[k])...)
		default:
			if err := json.Unmarshal(obj[k], t); err != nil {
				ps = append(ps, Problem{Path: at(k), Message: typeMessage(err, t)})
			}
		}
	}
	return ps
}

// typeMessage says what a value should have been.
func typeMessage(err error, target any) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	return fmt.Sprintf("is %s, must be %s", te.Value, describeType(reflect.TypeOf(target).Elem()))
}

// describeType names a Go type in a person's words.
func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	}
	return "a " + t.Name()
}
