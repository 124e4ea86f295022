package checkpoints

// Conversions of raw values (decoded JSON, form strings, numbers, pre-fills)
// to a field's value type, shared by Validate and by the repair of stored
// values (coerce, coerceValues).

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

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
