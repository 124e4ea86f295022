package pipeline

import (
	"fmt"
	"strings"

	"github.com/researchbot/researchbot/checkpoints"
)

// decideCustom applies a decision at an admin's own checkpoint. Its values
// become feedback the next planner or writer prompt sees (as data, in its
// own delimited block); approve and edit go on; reject sends the note back
// to the step before, as the built-in checkpoint at the same position does.
func (r *Run) decideCustom(inst *checkpoints.Instance, d *checkpoints.Decision) {
	values := d.Values
	if len(values) == 0 {
		values = inst.Values
	}
	if text := customValuesText(inst, values); text != "" {
		r.addFeedback(inst.DefinitionID, d, text)
	}
	if d.Action != checkpoints.Reject {
		return
	}
	note := orDefault(d.Note, fmt.Sprintf("%q was rejected without a reason.", inst.Label))
	pos := checkpoints.Position("")
	if r.Pause != nil {
		pos = r.Pause.Position
	}
	switch pos {
	case checkpoints.AfterPlanning:
		r.addFeedback(inst.DefinitionID, d, note)
		r.replan(d, fmt.Sprintf("rejected at %s by %s: %s", inst.Label, d.By, note))
	case checkpoints.AfterSearch:
		r.addFeedback(inst.DefinitionID, d, note)
		r.rejectUnmarkedSources()
		r.searchAgain(d, note)
	case checkpoints.AfterReview, checkpoints.BeforeOutput:
		r.humanCritique(d, note)
		r.revise("the rejection at " + inst.Label)
	default:
		r.toFallback(fmt.Sprintf("%s rejected by %s: %s", inst.Label, d.By, note))
	}
}

// customValuesText renders a custom checkpoint's answers, one field a line,
// labelled: "Label: value". Empty answers are left out.
func customValuesText(inst *checkpoints.Instance, values map[string]any) string {
	var b strings.Builder
	for _, f := range inst.Fields {
		v, ok := values[f.Key]
		if !ok {
			continue
		}
		text := valueText(f, v)
		if text == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", nonBlank(f.Label, f.Key), text)
	}
	if b.Len() == 0 {
		return ""
	}
	return "Answers at the " + inst.Label + " checkpoint:\n" + b.String()
}

// valueText is one field's value as text, with option values shown by
// their labels.
func valueText(f checkpoints.Field, v any) string {
	label := func(s string) string {
		for _, o := range f.Options {
			if o.Value == s {
				return o.Label
			}
		}
		return s
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(label(x))
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []string, []any:
		var parts []string
		for _, s := range stringsValue(map[string]any{"v": x}, "v") {
			parts = append(parts, label(s))
		}
		return strings.Join(parts, ", ")
	}
	return strings.TrimSpace(fmt.Sprint(v))
}
