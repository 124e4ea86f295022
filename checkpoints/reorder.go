package checkpoints

import (
	"fmt"
	"slices"
	"strings"
)

// ReorderFields returns a copy of fields in the order keys gives them (seed
// 004: reordering fields in the definition builder). keys must name every
// field exactly once; otherwise the problems say which keys are unknown,
// repeated or missing, and fields is returned unchanged. The order is the
// order the fields are shown and asked in; nothing else about them changes.
func ReorderFields(fields []Field, keys []string) ([]Field, []Problem) {
	var ps []Problem
	out := make([]Field, 0, len(fields))
	seen := map[string]bool{}
	for _, k := range keys {
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Key == k })
		switch {
		case i < 0:
			ps = append(ps, Problem{Path: "field_schema", Message: fmt.Sprintf("there is no field %q", k)})
		case seen[k]:
			ps = append(ps, Problem{Path: "field_schema", Message: fmt.Sprintf("field %q is named twice", k)})
		default:
			out = append(out, fields[i])
		}
		seen[k] = true
	}
	var missing []string
	for _, f := range fields {
		if !seen[f.Key] {
			missing = append(missing, fmt.Sprintf("%q", f.Key))
		}
	}
	if len(missing) > 0 {
		ps = append(ps, Problem{Path: "field_schema", Message: "every field must be placed; missing: " + strings.Join(missing, ", ")})
	}
	if len(ps) > 0 {
		return fields, ps
	}
	return out, nil
}
