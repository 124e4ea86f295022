package checkpoints

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Errors of stores of definitions.
var (
	// ErrNoDefinition: no definition has that id.
	ErrNoDefinition = errors.New("no such checkpoint definition")
	// ErrDefinitionExists: a new definition's id is taken.
	ErrDefinitionExists = errors.New("a checkpoint definition with this id exists")
)

// SortByPipeline orders definitions as a run meets them: by position in
// pipeline order, then sort order, then id.
func SortByPipeline(defs []Definition) {
	slices.SortStableFunc(defs, func(a, b Definition) int {
		return cmp.Or(cmp.Compare(slices.Index(positions(), a.Position), slices.Index(positions(), b.Position)),
			cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.ID, b.ID))
	})
}

// IsBuiltin reports whether id names one of the five built-in definitions,
// which may be edited but not deleted.
func IsBuiltin(id string) bool {
	return slices.Contains([]string{PlanReview, SourceReview, CriticalIssues, DraftReview, Clarify}, id)
}

// ChangeProblems lists what an edit of old into next may not do: change the
// id, or, for a built-in whose values the engine reads by key, change its
// control type or position, or add, remove or retype its fields, or drop
// the runtime options the engine fills in. Labels, help, placeholders,
// defaults, modes, timeouts, retries and the breaker stay editable.
func ChangeProblems(old, next Definition) []Problem {
	var ps []Problem
	if next.ID != old.ID {
		ps = append(ps, Problem{Path: "id", Message: fmt.Sprintf("is %q, but this edits %q (ids cannot change)", next.ID, old.ID)})
	}
	if !IsBuiltin(old.ID) {
		return ps
	}
	if next.ControlType != old.ControlType {
		ps = append(ps, Problem{Path: "control_type", Message: fmt.Sprintf("a built-in's control type stays %q", old.ControlType)})
	}
	if next.Position != old.Position {
		ps = append(ps, Problem{Path: "pipeline_position", Message: fmt.Sprintf("a built-in's position stays %q", old.Position)})
	}
	for _, f := range old.Fields {
		i := slices.IndexFunc(next.Fields, func(n Field) bool { return n.Key == f.Key })
		if i < 0 {
			ps = append(ps, Problem{Path: "field_schema", Message: fmt.Sprintf("a built-in keeps its field %q (the engine reads it)", f.Key)})
			continue
		}
		n := next.Fields[i]
		path := fmt.Sprintf("field_schema[%d]", i)
		if n.Type != f.Type {
			ps = append(ps, Problem{Path: path + ".type", Message: fmt.Sprintf("a built-in's field %q stays a %s", f.Key, f.Type)})
		}
		if f.RuntimeOptions && !n.RuntimeOptions {
			ps = append(ps, Problem{Path: path + ".runtime_options", Message: fmt.Sprintf("a built-in's field %q keeps its runtime options", f.Key)})
		}
	}
	for i, n := range next.Fields {
		if !slices.ContainsFunc(old.Fields, func(f Field) bool { return f.Key == n.Key }) {
			ps = append(ps, Problem{Path: fmt.Sprintf("field_schema[%d].key", i), Message: fmt.Sprintf("a built-in takes no new fields (%q): the engine would not read it", n.Key)})
		}
	}
	return ps
}

// Edited returns next as the edit of old: it keeps old's creation time and,
// unless keepEnabled is false, old's enabled state, and stamps UpdatedAt.
func Edited(old, next Definition, keepEnabled bool, now time.Time) Definition {
	next.CreatedAt = old.CreatedAt
	if keepEnabled {
		next.Enabled = old.Enabled
	}
	next.UpdatedAt = now
	return next
}
