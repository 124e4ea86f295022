package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
)

// form fills the definition form's state like Slack sends it.
type form map[string]map[string]slack.BlockAction

func (f form) text(block, v string) form {
	f[block] = map[string]slack.BlockAction{StartInput: {Value: v}}
	return f
}

func (f form) pick(block string, values ...string) form {
	a := slack.BlockAction{}
	for _, v := range values {
		a.SelectedOptions = append(a.SelectedOptions, slack.OptionBlockObject{Value: v})
		a.SelectedOption = slack.OptionBlockObject{Value: v}
	}
	f[block] = map[string]slack.BlockAction{StartInput: a}
	return f
}

func TestDefinitionFormParsesAndPlacesEveryProblem(t *testing.T) {
	state := form{}.text(DefIDBlock, "risk_check").text(defLabelBlock, "Risk check").pick(defPositionBlock, "after_planning").
		text(defSortBlock, "5").pick(defModesBlock, "guided", "full").text(defTimeoutBlock, "2h").text(defRetriesBlock, "2").
		text(defThresholdBlock, "5").text(defWindowBlock, "1h").
		text(slotBlock(0, slotKey), "level").text(slotBlock(0, slotLabel), "Risk level").pick(slotBlock(0, slotType), "select").
		text(slotBlock(0, slotOptions), "low | Low\nhigh | High").pick(slotBlock(0, slotRequired), requiredValue).
		text(slotBlock(2, slotKey), "score").text(slotBlock(2, slotLabel), "Score").pick(slotBlock(2, slotType), "range").
		text(slotBlock(2, slotMin), "1").text(slotBlock(2, slotMax), "5").text(slotBlock(2, slotDefault), "3")
	d, slots, errs := ParseDefinitionForm(DefinitionMeta{Slots: 3}, checkpoints.Definition{}, state)
	if len(errs) != 0 || len(checkpoints.DefinitionProblems(d)) != 0 {
		t.Fatalf("a valid form: %v %v", errs, checkpoints.DefinitionProblems(d))
	}
	if d.ID != "risk_check" || d.Timeout != 2*time.Hour || d.SortOrder != 5 || len(d.Fields) != 2 || slots[1] != 2 {
		t.Fatalf("parsed %+v, slots %v", d, slots)
	}
	if f := d.Fields[0]; !f.Required || len(f.Options) != 2 || f.Options[1] != (checkpoints.Option{Value: "high", Label: "High"}) {
		t.Fatalf("select field %+v", f)
	}
	if f := d.Fields[1]; f.Default != 3.0 || *f.Max != 5 {
		t.Fatalf("range field %+v", f)
	}

	// A range without max in slot 2, an unknown option default in slot 0,
	// a bad number and no label: each problem on its own block.
	state.text(slotBlock(2, slotMax), "").text(slotBlock(0, slotDefault), "medium").text(defSortBlock, "first").text(defLabelBlock, "")
	d, slots, errs = ParseDefinitionForm(DefinitionMeta{Slots: 3}, checkpoints.Definition{}, state)
	for k, v := range DefinitionErrors(checkpoints.DefinitionProblems(d), slots, true) {
		errs[k] = v
	}
	want := map[string]string{
		defSortBlock: "Must be a whole number.", defLabelBlock: "label is empty",
		slotBlock(2, slotMax): "range needs both min and max", slotBlock(0, slotDefault): `"medium" is not one of the options`,
	}
	for block, msg := range want {
		if !strings.Contains(errs[block], msg) {
			t.Errorf("block %s: %q, want %q (all: %v)", block, errs[block], msg, errs)
		}
	}
}

// formAsOpened is the state Slack sends for a form submitted as it was opened.
func formAsOpened(v slack.ModalViewRequest) map[string]map[string]slack.BlockAction {
	state := map[string]map[string]slack.BlockAction{}
	for _, b := range v.Blocks.BlockSet {
		in, ok := b.(*slack.InputBlock)
		if !ok {
			continue
		}
		var a slack.BlockAction
		switch el := in.Element.(type) {
		case *slack.PlainTextInputBlockElement:
			a.Value = el.InitialValue
		case *slack.SelectBlockElement:
			if el.InitialOption != nil {
				a.SelectedOption = *el.InitialOption
			}
		case *slack.CheckboxGroupsBlockElement:
			for _, o := range el.InitialOptions {
				a.SelectedOptions = append(a.SelectedOptions, *o)
			}
		}
		state[in.BlockID] = map[string]slack.BlockAction{StartInput: a}
	}
	return state
}

// Every built-in saved unchanged through the edit form stays as it was:
// what the form does not show (runtime options, help, max length, actions)
// is kept.
func TestTheEditFormRoundTripsEveryBuiltin(t *testing.T) {
	for _, d := range checkpoints.Builtins(time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)) {
		view := DefinitionModal(d, false)
		var meta DefinitionMeta
		if err := json.Unmarshal([]byte(view.PrivateMetadata), &meta); err != nil {
			t.Fatal(err)
		}
		got, _, errs := ParseDefinitionForm(meta, d, formAsOpened(view))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", d.ID, errs)
		}
		if ps := append(checkpoints.DefinitionProblems(got), checkpoints.ChangeProblems(d, got)...); len(ps) > 0 {
			t.Fatalf("%s: %v", d.ID, ps)
		}
		a, _ := json.Marshal(checkpoints.DocumentOf(got))
		b, _ := json.Marshal(checkpoints.DocumentOf(d))
		if string(a) != string(b) {
			t.Errorf("%s changed:\n%s\n%s", d.ID, a, b)
		}
	}
}

// The form's Reminders input reads a policy, round-trips one, keeps the
// default as the default, and places a nonsense one's problems on itself.
func TestDefinitionFormReminders(t *testing.T) {
	base := form{}.text(DefIDBlock, "risk_check").text(defLabelBlock, "Risk check").pick(defPositionBlock, "after_planning").
		pick(defModesBlock, "guided").pick(defRequiredBlock, requiredValue).text(defTimeoutBlock, "1h").text(defRetriesBlock, "2")
	parse := func(v string) (checkpoints.Definition, map[string]string) {
		state := form{}
		for k, a := range base {
			state[k] = a
		}
		d, slots, errs := ParseDefinitionForm(DefinitionMeta{Slots: 0}, checkpoints.Definition{}, state.text(defRemindersBlock, v))
		for k, v := range DefinitionErrors(checkpoints.DefinitionProblems(d), slots, true) {
			errs[k] = v
		}
		return d, errs
	}
	d, errs := parse("2, 3, 5h, requester")
	want := checkpoints.ReminderPolicy{Count: 2, Factor: 3, MaxInterval: 5 * time.Hour, Escalate: checkpoints.EscalateRequester}
	if len(errs) > 0 || d.Reminders == nil || *d.Reminders != want {
		t.Fatalf("parsed %+v, errors %v; want %+v", d.Reminders, errs, want)
	}
	if got := reminderText(d.Reminders); got != "2, 3, 5h, requester" {
		t.Fatalf("shown as %q", got)
	}
	for _, v := range []string{"", "3, 2, 24h, admins"} {
		if d, errs := parse(v); len(errs) > 0 || d.Reminders != nil {
			t.Fatalf("%q: %+v %v, want the default (nil)", v, d.Reminders, errs)
		}
	}
	for v, msg := range map[string]string{
		"three":               "Write four values",
		"-1, 2, 24h, admins":  "-1 reminders",
		"3, 0, 24h, admins":   "backoff factor 0",
		"3, 2, 24h, everyone": "unknown escalation",
		"20, 10, 0, admins":   "would last",
	} {
		if _, errs := parse(v); !strings.Contains(errs[defRemindersBlock], msg) {
			t.Errorf("%q: errors %v, want %q on the reminders input", v, errs, msg)
		}
	}
}
