package checkpoints

import (
	"slices"
	"strings"
	"testing"
)

func fieldKeys(fs []Field) []string {
	var ks []string
	for _, f := range fs {
		ks = append(ks, f.Key)
	}
	return ks
}

// TestReorderFields: a permutation of the keys reorders the fields and
// keeps each one whole; an unknown, repeated or missing key is refused with
// the key named, and the fields stay as they were.
func TestReorderFields(t *testing.T) {
	fields := []Field{{Key: "a", Label: "A", Required: true}, {Key: "b", Type: FieldText}, {Key: "c"}}
	got, ps := ReorderFields(fields, []string{"c", "a", "b"})
	if len(ps) != 0 || !slices.Equal(fieldKeys(got), []string{"c", "a", "b"}) || !got[1].Required || got[1].Label != "A" {
		t.Fatalf("ReorderFields = %v, %v", got, ps)
	}
	if !slices.Equal(fieldKeys(fields), []string{"a", "b", "c"}) {
		t.Errorf("the fields given were changed: %v", fieldKeys(fields))
	}
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"c", "a", "x", "b"}, `there is no field "x"`},
		{[]string{"c", "a", "a", "b"}, `field "a" is named twice`},
		{[]string{"c", "a"}, `every field must be placed; missing: "b"`},
	} {
		got, ps := ReorderFields(fields, c.keys)
		if len(ps) != 1 || !strings.Contains(ps[0].Message, c.want) || !slices.Equal(fieldKeys(got), []string{"a", "b", "c"}) {
			t.Errorf("ReorderFields(%v) = %v, %v; want the problem %q and the fields as they were", c.keys, fieldKeys(got), ps, c.want)
		}
	}
}
