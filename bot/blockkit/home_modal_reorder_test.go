package blockkit

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
)

// fourFields is a definition whose fields are a, b, c, d.
func fourFields() checkpoints.Definition {
	d := checkpoints.Definition{ID: "risk_check", ControlType: "risk_check", Label: "Risk", Position: checkpoints.AfterPlanning, Modes: []string{"guided"}}
	for _, k := range []string{"a", "b", "c", "d"} {
		d.Fields = append(d.Fields, checkpoints.Field{Key: k, Label: strings.ToUpper(k), Type: checkpoints.FieldText})
	}
	return d
}

// TestDefinitionFormMovesFields: a field's position moves it among the
// fields — up before the field at that place, down after it — and the
// others keep their order; a problem on a moved field lands on its own
// slot; a position outside the form is refused on its block.
func TestDefinitionFormMovesFields(t *testing.T) {
	base := fourFields()
	view := DefinitionModal(base, false)
	var meta DefinitionMeta
	if err := json.Unmarshal([]byte(view.PrivateMetadata), &meta); err != nil {
		t.Fatal(err)
	}
	keys := func(d checkpoints.Definition) []string {
		var ks []string
		for _, f := range d.Fields {
			ks = append(ks, f.Key)
		}
		return ks
	}
	for _, c := range []struct {
		name  string
		moves map[int]string // slot → position picked
		want  []string
	}{
		{"untouched", nil, []string{"a", "b", "c", "d"}},
		{"last to the top", map[int]string{3: "1"}, []string{"d", "a", "b", "c"}},
		{"first to the third place", map[int]string{0: "3"}, []string{"b", "c", "a", "d"}},
		{"first to the bottom of the slots", map[int]string{0: "6"}, []string{"b", "c", "d", "a"}},
		{"two swapped", map[int]string{1: "3", 2: "2"}, []string{"a", "c", "b", "d"}},
	} {
		state := form(formAsOpened(view))
		for slot, pos := range c.moves {
			state.pick(slotBlock(slot, slotPosition), pos)
		}
		d, slots, errs := ParseDefinitionForm(meta, base, state)
		if len(errs) > 0 || !slices.Equal(keys(d), c.want) {
			t.Errorf("%s: fields %v (errors %v), want %v", c.name, keys(d), errs, c.want)
			continue
		}
		for i, f := range d.Fields {
			if want := strings.ToUpper(f.Key); f.Label != want || slots[i] != int(f.Key[0]-'a') {
				t.Errorf("%s: field %d is %+v from slot %d", c.name, i, f, slots[i])
			}
		}
	}

	// Field c, moved to the top with an empty label: the problem is shown on c's slot.
	state := form(formAsOpened(view)).pick(slotBlock(2, slotPosition), "1").text(slotBlock(2, slotLabel), "")
	d, slots, _ := ParseDefinitionForm(meta, base, state)
	errs := DefinitionErrors(checkpoints.DefinitionProblems(d), slots, false)
	if keys(d)[0] != "c" || !strings.Contains(errs[slotBlock(2, slotLabel)], "label") {
		t.Errorf("a problem on a moved field: fields %v, errors %v", keys(d), errs)
	}

	for _, bad := range []string{"0", "99", "first"} {
		_, _, errs := ParseDefinitionForm(meta, base, form(formAsOpened(view)).pick(slotBlock(1, slotPosition), bad))
		if want := "Pick a position from 1 to 6."; errs[slotBlock(1, slotPosition)] != want {
			t.Errorf("position %q: %v, want %q on its block", bad, errs, want)
		}
	}
}

// TestDefinitionFormWithMostFieldsFitsAModal: with every field slot used,
// the form (position inputs included) stays within a modal's 100 blocks.
func TestDefinitionFormWithMostFieldsFitsAModal(t *testing.T) {
	d := fourFields()
	for len(d.Fields) < maxFieldSlots {
		d.Fields = append(d.Fields, checkpoints.Field{Key: "k" + string(rune('a'+len(d.Fields))), Label: "K", Type: checkpoints.FieldText})
	}
	for _, create := range []bool{true, false} {
		if n := len(DefinitionModal(d, create).Blocks.BlockSet); n > MaxViewBlocks {
			t.Errorf("create %v: %d blocks, more than a modal takes (%d)", create, n, MaxViewBlocks)
		}
	}
}
