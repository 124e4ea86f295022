package checkpoints

import (
	"cmp"
	"slices"
)

// Resolve returns the definitions that apply at position pos in a run of the
// given mode: enabled, at pos, applying to mode (Modes contain it or "*") and
// whose breaker is not tripped. tripped may be nil (no breaker is tripped).
// The result is a new slice ordered by SortOrder, then ID.
func Resolve(defs []Definition, pos Position, mode string, tripped func(defID string) bool) []Definition {
	var out []Definition
	for _, d := range defs {
		if !d.Enabled || d.Position != pos || !d.AppliesTo(mode) {
			continue
		}
		if tripped != nil && tripped(d.ID) {
			continue
		}
		out = append(out, d)
	}
	slices.SortStableFunc(out, func(a, b Definition) int {
		return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.ID, b.ID))
	})
	return out
}
