package blockkit

import (
	"reflect"
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Every form that is a list of fields is a list of well-formed checkpoint
// field schemas: each passes the checks a checkpoint definition's fields
// pass (slug keys, labels, options where the type takes them, bounds).
func TestFormsAreCheckpointFieldSchemas(t *testing.T) {
	forms := map[string][]checkpoints.Field{
		"start":             startFields(),
		"definition create": definitionFields(true, maxFieldSlots),
		"definition edit":   definitionFields(false, minFieldSlots),
		"reject":            {rejectReason()},
		"verdict reason":    {verdictReason()},
	}
	for name, fields := range forms {
		seen := map[string]bool{}
		for _, f := range fields {
			d := checkpoints.Definition{ID: "form", ControlType: "form", Label: "Form", Position: checkpoints.AfterPlanning, Modes: []string{"*"}, Fields: []checkpoints.Field{f}}
			if ps := checkpoints.DefinitionProblems(d); len(ps) > 0 {
				t.Errorf("%s: field %s: %v", name, f.Key, ps)
			}
			if seen[f.Key] {
				t.Errorf("%s: key %s twice", name, f.Key)
			}
			seen[f.Key] = true
		}
	}
}

// The start form, submitted as it was opened, gives back the settings it
// was opened with: one renderer and one parser over one list of fields.
func TestStartFormRoundTrips(t *testing.T) {
	for _, s := range []StartSettings{
		DefaultStartSettings(),
		{Mode: checkpoints.ModeAuto, Depth: pipeline.DepthQuick, BudgetUSD: 0.75, Domains: pipeline.DomainRules{Only: []string{"example.org", "example.net"}, Never: []string{"spam.example"}}},
		{Mode: checkpoints.ModeGuided, Depth: pipeline.DepthComprehensive, ReviewSources: true, BudgetUSD: 12},
	} {
		state := formAsOpened(StartModal(s, "What is RAG and why does it matter?", StartMeta{Channel: "C1"}))
		f, errs := ParseStartForm(`{"c":"C1"}`, state)
		if errs != nil || f.Question != "What is RAG and why does it matter?" || !reflect.DeepEqual(f.Settings, s) {
			t.Errorf("opened with %+v, submitted %+v (errors %v)", s, f.Settings, errs)
		}
	}
	// A remembered mode or depth the form does not offer opens, and reads, as the default.
	view := StartModal(StartSettings{Mode: "full", Depth: "deep"}, "", StartMeta{Channel: "C1"})
	state := formAsOpened(view)
	if got := [2]string{state[startModeBlock][StartInput].SelectedOption.Value, state[startDepthBlock][StartInput].SelectedOption.Value}; got != [2]string{"guided", "standard"} {
		t.Errorf("opened with mode and depth %v, want the defaults", got)
	}
	f, _ := ParseStartForm("", map[string]map[string]slack.BlockAction{
		startModeBlock: {StartInput: {SelectedOption: slack.OptionBlockObject{Value: "full"}}}, startDepthBlock: {StartInput: {SelectedOption: slack.OptionBlockObject{Value: "deep"}}},
	})
	if f.Settings.Mode != checkpoints.ModeGuided || f.Settings.Depth != pipeline.DepthStandard {
		t.Errorf("submitted full and deep: %+v, want the defaults", f.Settings)
	}
}

// A text input says its max_length only when its field sets one (Slack's
// 3000 at most), and is cut to it; the Edit form limits a checkpoint's text
// even when the field does not.
func TestFieldInputMaxLength(t *testing.T) {
	long := make([]byte, 3500)
	for i := range long {
		long[i] = 'a'
	}
	for _, c := range []struct {
		maxLength, want int
	}{{0, 0}, {100, 100}, {10000, MaxInputLength}} {
		in := fieldInput(checkpoints.Field{Key: "k", Type: checkpoints.FieldText, Label: "K", MaxLength: c.maxLength}, string(long))
		el := in.Element.(*slack.PlainTextInputBlockElement)
		if el.MaxLength != c.want || (c.want > 0 && len([]rune(el.InitialValue)) != c.want) || (c.want == 0 && el.InitialValue != string(long)) {
			t.Errorf("max length %d: max_length %d, initial value of %d runes", c.maxLength, el.MaxLength, len([]rune(el.InitialValue)))
		}
	}
	inst := &checkpoints.Instance{ID: "i", Fields: []checkpoints.Field{{Key: "k", Type: checkpoints.FieldTextarea, Label: "K"}}}
	for _, b := range EditModal(inst).Blocks.BlockSet {
		if in, ok := b.(*slack.InputBlock); ok && in.Element.(*slack.PlainTextInputBlockElement).MaxLength != checkpoints.MaxTextLength {
			t.Errorf("the Edit form's text without a limit: max_length %d, want %d", in.Element.(*slack.PlainTextInputBlockElement).MaxLength, checkpoints.MaxTextLength)
		}
	}
}

func TestVerdictReasonRoundTrips(t *testing.T) {
	m := VerdictReasonModal("r1|f2")
	in, ok := m.Blocks.BlockSet[1].(*slack.InputBlock)
	if !ok || in.BlockID != VerdictReasonBlock || !in.Optional {
		t.Fatalf("the reason form's input = %#v, want an optional input %q", m.Blocks.BlockSet[1], VerdictReasonBlock)
	}
	if el, _ := in.Element.(*slack.PlainTextInputBlockElement); el == nil || !el.Multiline || el.ActionID != ValueActionID || el.MaxLength != pipeline.MaxFeedbackReasonRunes {
		t.Fatalf("the reason form's element = %#v", in.Element)
	}
	state := map[string]map[string]slack.BlockAction{VerdictReasonBlock: {ValueActionID: {Value: " it missed\u200b the 2025 studies\n"}}}
	if got, want := VerdictReason(state), " it missed the 2025 studies\n"; got != want {
		t.Errorf("VerdictReason = %q, want %q (as shown, not trimmed)", got, want)
	}
	if got := VerdictReason(nil); got != "" {
		t.Errorf("VerdictReason(nil) = %q, want empty", got)
	}
}
