package bot

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
)

// stateFromModal is what Slack would submit for a modal nobody changed: each
// input's initial value, in view.state.values form.
func stateFromModal(t *testing.T, view slack.ModalViewRequest) map[string]map[string]slack.BlockAction {
	t.Helper()
	raw, err := json.Marshal(view.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	return stateFromBlocks(t, raw)
}

// stateFromBlocks is stateFromModal for a view's blocks as JSON.
func stateFromBlocks(t *testing.T, raw json.RawMessage) map[string]map[string]slack.BlockAction {
	t.Helper()
	var blocks []struct {
		Type    string `json:"type"`
		BlockID string `json:"block_id"`
		Element struct {
			Type           string                    `json:"type"`
			ActionID       string                    `json:"action_id"`
			InitialValue   string                    `json:"initial_value"`
			InitialOption  *slack.OptionBlockObject  `json:"initial_option"`
			InitialOptions []slack.OptionBlockObject `json:"initial_options"`
		} `json:"element"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	state := map[string]map[string]slack.BlockAction{}
	for _, b := range blocks {
		if b.Type != "input" {
			continue
		}
		a := slack.BlockAction{ActionID: b.Element.ActionID, BlockID: b.BlockID, Type: slack.ActionType(b.Element.Type)}
		switch b.Element.Type {
		case "plain_text_input", "number_input":
			a.Value = b.Element.InitialValue
		case "static_select", "radio_buttons":
			if b.Element.InitialOption != nil {
				a.SelectedOption = *b.Element.InitialOption
			}
		case "multi_static_select", "checkboxes":
			a.SelectedOptions = b.Element.InitialOptions
		default:
			t.Fatalf("unexpected element type %q", b.Element.Type)
		}
		state[b.BlockID] = map[string]slack.BlockAction{a.ActionID: a}
	}
	return state
}

func TestParseSubmissionRoundTripsAllNineTypes(t *testing.T) {
	for _, inst := range []*checkpoints.Instance{allTypesInstance(), planInstance(), sourcesInstance(), draftInstance()} {
		t.Run(inst.DefinitionID, func(t *testing.T) {
			view := blockkit.EditModal(inst)
			if view.PrivateMetadata != inst.ID || view.CallbackID != blockkit.CallbackEdit {
				t.Fatalf("metadata %q, callback %q", view.PrivateMetadata, view.CallbackID)
			}
			got := blockkit.ParseSubmission(inst.Fields, stateFromModal(t, view))
			gotNorm, errs := checkpoints.Validate(inst.Fields, got)
			if len(errs) > 0 {
				t.Fatalf("round trip does not validate: %v (values %v)", errs, got)
			}
			wantNorm, errs := checkpoints.Validate(inst.Fields, inst.Values)
			if len(errs) > 0 {
				t.Fatalf("fixture does not validate: %v", errs)
			}
			// A field without a value submits empty; Validate leaves it out.
			if !reflect.DeepEqual(gotNorm, wantNorm) {
				t.Errorf("round trip changed the values:\n got %#v\nwant %#v", gotNorm, wantNorm)
			}
		})
	}
}

func TestEditModalCoversEveryFieldType(t *testing.T) {
	view := blockkit.EditModal(allTypesInstance())
	want := map[string]string{
		"title": "plain_text_input", "notes": "plain_text_input", "depth": "static_select", "topics": "multi_static_select",
		"flags": "checkboxes", "agree": "checkboxes", "tone": "radio_buttons", "count": "number_input", "ratio": "number_input",
		"tags": "plain_text_input", "labels": "multi_static_select",
	}
	got := map[string]string{}
	for _, b := range view.Blocks.BlockSet {
		if in, ok := b.(*slack.InputBlock); ok {
			got[in.BlockID] = string(in.Element.ElementType())
			if in.BlockID == "title" && in.Optional {
				t.Error("a required field is optional")
			}
			if in.BlockID == "notes" && !in.Optional {
				t.Error("an optional field is required")
			}
			if in.BlockID == "ratio" {
				n := in.Element.(*slack.NumberInputBlockElement)
				if n.MinValue != "0" || n.MaxValue != "1" || n.InitialValue != "0.25" {
					t.Errorf("range: min %q max %q initial %q", n.MinValue, n.MaxValue, n.InitialValue)
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("element types = %v, want %v", got, want)
	}
}

func TestParseSubmissionConversions(t *testing.T) {
	fields := allTypesInstance().Fields
	state := map[string]map[string]slack.BlockAction{
		"title":  {"value": {Value: "  New  "}},
		"count":  {"value": {Value: "abc"}},
		"ratio":  {"value": {Value: ""}},
		"agree":  {"value": {}},
		"tags":   {"value": {Value: "a, b,,\nc "}},
		"topics": {"value": {SelectedOptions: []slack.OptionBlockObject{{Value: "b"}}}},
		"tone":   {"value": {SelectedOption: slack.OptionBlockObject{Value: "a"}}},
	}
	got := blockkit.ParseSubmission(fields, state)
	want := map[string]any{"title": "  New  ", "count": "abc", "ratio": nil, "agree": false, "tags": []string{"a", "b", "c"}, "topics": []string{"b"}, "tone": "a"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	_, errs := checkpoints.Validate(fields, got)
	ack := blockkit.SubmissionErrors(fields, errs)
	if ack["count"] == "" || ack["title"] != "" {
		t.Errorf("errors ack = %v; want an error on count only (and title ok)", ack)
	}
	resp := slack.NewErrorsViewSubmissionResponse(ack)
	b, _ := json.Marshal(resp)
	var decoded struct {
		ResponseAction string            `json:"response_action"`
		Errors         map[string]string `json:"errors"`
	}
	_ = json.Unmarshal(b, &decoded)
	if decoded.ResponseAction != "errors" || decoded.Errors["count"] == "" {
		t.Errorf("ack payload = %s", b)
	}
}

func TestSubmissionErrorsPutsUnknownKeysOnTheFirstField(t *testing.T) {
	fields := []checkpoints.Field{{Key: "a"}, {Key: "b"}}
	got := blockkit.SubmissionErrors(fields, []checkpoints.FieldError{{Key: "zzz", Message: "This is not a field of this form"}, {Key: "b", Message: "bad"}})
	if got["a"] == "" || got["b"] != "bad" {
		t.Errorf("got %v", got)
	}
}

func TestRejectModalRequiresAReason(t *testing.T) {
	view := blockkit.RejectModal(planInstance())
	var in *slack.InputBlock
	for _, b := range view.Blocks.BlockSet {
		if x, ok := b.(*slack.InputBlock); ok {
			in = x
		}
	}
	if in == nil || in.Optional || in.BlockID != blockkit.ReasonBlockID || view.CallbackID != blockkit.CallbackReject || view.PrivateMetadata != "run-42.cp-1" {
		t.Fatalf("reject modal: %+v", view)
	}
	state := map[string]map[string]slack.BlockAction{blockkit.ReasonBlockID: {blockkit.ValueActionID: {Value: "  too broad "}}}
	if got := blockkit.RejectReason(state); got != "too broad" {
		t.Errorf("rejectReason = %q", got)
	}
}

func TestEditModalCapsMaxLengthAtSlacksLimit(t *testing.T) {
	inst := planInstance()
	inst.Fields = []checkpoints.Field{{Key: "notes", Type: checkpoints.FieldTextarea, Label: "Notes", MaxLength: 10000}}
	inst.Values = map[string]any{"notes": strings.Repeat("long notes ", 500)} // 5,500 runes
	view := blockkit.EditModal(inst)
	var input *slack.PlainTextInputBlockElement
	for _, b := range view.Blocks.BlockSet {
		if in, ok := b.(*slack.InputBlock); ok && in.BlockID == "notes" {
			input, _ = in.Element.(*slack.PlainTextInputBlockElement)
		}
	}
	if input == nil {
		t.Fatal("no text input for the field")
	}
	if input.MaxLength != 3000 || utf8.RuneCountInString(input.InitialValue) > 3000 {
		t.Errorf("max_length %d, initial value of %d runes; Slack accepts at most 3000", input.MaxLength, utf8.RuneCountInString(input.InitialValue))
	}
	if probs := blockProblems(view.Blocks.BlockSet, blockkit.MaxModalBlocks); len(probs) > 0 {
		t.Errorf("limits: %v", probs)
	}
}
