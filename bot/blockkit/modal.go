package blockkit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Callback ids of the modals this package renders. A modal's
// private_metadata is the checkpoint instance id.
const (
	CallbackEdit   = "checkpoint_edit"
	CallbackReject = "checkpoint_reject"
)

// Block and action ids inside the modals.
const (
	ValueActionID = "value"  // the action_id of every input element
	ReasonBlockID = "reason" // the Reject modal's reason
	boolOption    = "true"   // the one option of a yes/no checkbox
)

// EditModal renders the Edit form of a checkpoint from inst.Fields, pre-filled
// from inst.Values (or each field's Default). Each field is an input block
// whose block_id is the field key, so field errors map back to it.
func EditModal(inst *checkpoints.Instance) slack.ModalViewRequest {
	var blocks []slack.Block
	blocks = append(blocks, ContextText("Change what you want and press *Save*; the run continues with your version."))
	blocks = append(blocks, modalPayload(inst)...)
	for _, f := range inst.Fields {
		v, ok := inst.Values[f.Key]
		if !ok {
			v = f.Default
		}
		blocks = append(blocks, fieldInput(f, v))
		if len(blocks) >= MaxModalBlocks {
			break
		}
	}
	title, submit := "Edit: "+FirstNonEmpty(inst.Label, "checkpoint"), "Save"
	if inst.ControlType == checkpoints.Clarify {
		blocks[0] = ContextText(clarifyModalIntro)
		title, submit = clarifyModalTitle, clarifyModalSubmit
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           Plain(title, MaxModalTitle),
		Submit:          Plain(submit, MaxModalTitle),
		Close:           Plain("Cancel", MaxModalTitle),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: inst.ID,
		CallbackID:      CallbackEdit,
		NotifyOnClose:   true,
	}
}

// modalPayload is the read-only text an Edit form shows above its inputs:
// the whole draft for a draft review (split into sections).
func modalPayload(inst *checkpoints.Instance) []slack.Block {
	if inst.ControlType != checkpoints.DraftReview {
		return nil
	}
	var p pipeline.DraftPayload
	if json.Unmarshal(inst.Payload, &p) != nil || strings.TrimSpace(p.Markdown) == "" {
		return nil
	}
	var blocks []slack.Block
	rest := []rune(Escape(p.Markdown))
	const per = 2900
	for len(rest) > 0 && len(blocks) < 40 {
		n := min(per, len(rest))
		chunk := string(rest[:n])
		if n < len(rest) {
			// Never split an entity.
			if i := strings.LastIndex(chunk, "&"); i >= 0 && !strings.Contains(chunk[i:], ";") {
				chunk = chunk[:i]
			}
		}
		rest = rest[len([]rune(chunk)):]
		blocks = append(blocks, Section(chunk))
	}
	if len(rest) > 0 {
		blocks = append(blocks, ContextText("…the draft continues; the final report will be attached in full."))
	}
	blocks = append(blocks, slack.NewDividerBlock())
	return blocks
}

// fieldInput renders one field as an input block pre-filled with v.
func fieldInput(f checkpoints.Field, v any) *slack.InputBlock {
	var el slack.BlockElement
	opts := options(f.Options)
	switch f.Type {
	case checkpoints.FieldText, checkpoints.FieldTextarea:
		t := slack.NewPlainTextInputBlockElement(placeholder(f), ValueActionID)
		t.Multiline = f.Type == checkpoints.FieldTextarea
		t.MaxLength = f.MaxLength
		if t.MaxLength <= 0 || t.MaxLength > MaxInputLength {
			t.MaxLength = MaxInputLength // Slack refuses a larger max_length
		}
		t.InitialValue = Truncate(textValue(v), t.MaxLength)
		el = t
	case checkpoints.FieldSelect, checkpoints.FieldRadio:
		init := selected(opts, stringsOf(v))
		if f.Type == checkpoints.FieldRadio && len(opts) > 0 && len(opts) <= MaxChoiceOptions {
			r := slack.NewRadioButtonsBlockElement(ValueActionID, opts...)
			if len(init) > 0 {
				r.InitialOption = init[0]
			}
			el = r
		} else {
			s := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, placeholder(f), ValueActionID, opts...)
			if len(init) > 0 {
				s.InitialOption = init[0]
			}
			el = s
		}
	case checkpoints.FieldMultiSelect, checkpoints.FieldChips:
		if len(opts) == 0 && f.Type == checkpoints.FieldChips {
			t := slack.NewPlainTextInputBlockElement(Plain(FirstNonEmpty(f.Placeholder, "tags, separated by commas"), MaxPlaceholder), ValueActionID)
			t.InitialValue = strings.Join(stringsOf(v), ", ")
			el = t
			break
		}
		m := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, placeholder(f), ValueActionID, opts...)
		m.InitialOptions = selected(opts, stringsOf(v))
		el = m
	case checkpoints.FieldCheckbox:
		if len(f.Options) == 0 {
			yes := slack.NewOptionBlockObject(boolOption, Plain(FirstNonEmpty(f.Label, "Yes"), MaxOptionText), nil)
			c := slack.NewCheckboxGroupsBlockElement(ValueActionID, yes)
			if b, _ := v.(bool); b || textValue(v) == "true" {
				c.InitialOptions = []*slack.OptionBlockObject{yes}
			}
			el = c
			break
		}
		if len(opts) <= MaxChoiceOptions {
			c := slack.NewCheckboxGroupsBlockElement(ValueActionID, opts...)
			c.InitialOptions = selected(opts, stringsOf(v))
			el = c
		} else {
			m := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeStatic, placeholder(f), ValueActionID, opts...)
			m.InitialOptions = selected(opts, stringsOf(v))
			el = m
		}
	case checkpoints.FieldNumber, checkpoints.FieldRange:
		n := slack.NewNumberInputBlockElement(placeholder(f), ValueActionID, true)
		if f.Min != nil {
			n.MinValue = strconv.FormatFloat(*f.Min, 'f', -1, 64)
		}
		if f.Max != nil {
			n.MaxValue = strconv.FormatFloat(*f.Max, 'f', -1, 64)
		}
		if x, ok := number(v); ok {
			n.InitialValue = strconv.FormatFloat(x, 'f', -1, 64)
		}
		el = n
	default:
		t := slack.NewPlainTextInputBlockElement(placeholder(f), ValueActionID)
		t.InitialValue = Truncate(textValue(v), 3000)
		el = t
	}
	var hint *slack.TextBlockObject
	if h := strings.TrimSpace(f.Help); h != "" {
		hint = Plain(Truncate(h, MaxInputLabel), MaxInputLabel)
	}
	in := slack.NewInputBlock(f.Key, Plain(FirstNonEmpty(f.Label, f.Key), MaxInputLabel), hint, el)
	in.Optional = !f.Required
	return in
}

// placeholder is a field's placeholder text, or nil.
func placeholder(f checkpoints.Field) *slack.TextBlockObject {
	if strings.TrimSpace(f.Placeholder) == "" {
		return nil
	}
	return Plain(f.Placeholder, MaxPlaceholder)
}

// options renders choices (at most Slack's 100).
func options(in []checkpoints.Option) []*slack.OptionBlockObject {
	out := make([]*slack.OptionBlockObject, 0, min(len(in), MaxOptions))
	for i, o := range in {
		if i == MaxOptions {
			break
		}
		out = append(out, slack.NewOptionBlockObject(Truncate(o.Value, MaxOptionValue), Plain(FirstNonEmpty(o.Label, o.Value), MaxOptionText), nil))
	}
	return out
}

// selected returns the options whose value (or label) is among vals.
func selected(opts []*slack.OptionBlockObject, vals []string) []*slack.OptionBlockObject {
	var out []*slack.OptionBlockObject
	for _, v := range vals {
		for _, o := range opts {
			if o.Value == v || strings.EqualFold(o.Text.Text, v) {
				out = append(out, o)
				break
			}
		}
	}
	return out
}

// textValue renders a value as form text: lists one item per line.
func textValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []string:
		return strings.Join(x, "\n")
	case []any:
		return strings.Join(stringsOf(x), "\n")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// stringsOf turns a value into a list of strings.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, textValue(e))
		}
		return out
	}
	return []string{textValue(v)}
}

// number reads a numeric value.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// ParseSubmission turns a submitted Edit form back into field values: text
// as strings, choices as option values, multi-valued fields as []string, a
// yes/no checkbox as a bool, numbers as float64 (text that is not a number is
// kept as text for validation to report). Every field whose block is in the
// state is present; an emptied field is present and empty, so it clears.
func ParseSubmission(fields []checkpoints.Field, state map[string]map[string]slack.BlockAction) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		blk, ok := state[f.Key]
		if !ok {
			continue
		}
		a, ok := blk[ValueActionID]
		if !ok {
			for _, x := range blk {
				a, ok = x, true
				break
			}
		}
		if !ok {
			continue
		}
		switch f.Type {
		case checkpoints.FieldText, checkpoints.FieldTextarea:
			out[f.Key] = a.Value
		case checkpoints.FieldSelect, checkpoints.FieldRadio:
			out[f.Key] = a.SelectedOption.Value
		case checkpoints.FieldMultiSelect:
			out[f.Key] = optionValues(a.SelectedOptions)
		case checkpoints.FieldChips:
			if len(f.Options) == 0 {
				out[f.Key] = splitTags(a.Value)
			} else {
				out[f.Key] = optionValues(a.SelectedOptions)
			}
		case checkpoints.FieldCheckbox:
			if len(f.Options) == 0 {
				out[f.Key] = len(a.SelectedOptions) > 0
			} else {
				out[f.Key] = optionValues(a.SelectedOptions)
			}
		case checkpoints.FieldNumber, checkpoints.FieldRange:
			s := strings.TrimSpace(a.Value)
			if s == "" {
				out[f.Key] = nil
			} else if x, err := strconv.ParseFloat(s, 64); err == nil {
				out[f.Key] = x
			} else {
				out[f.Key] = s
			}
		default:
			out[f.Key] = a.Value
		}
	}
	return out
}

// optionValues lists the values of chosen options.
func optionValues(opts []slack.OptionBlockObject) []string {
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		out = append(out, o.Value)
	}
	return out
}

// splitTags splits free tags on commas and newlines.
func splitTags(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// SubmissionErrors maps field errors to the block ids of the Edit form, for
// a view_submission ack {"response_action":"errors"}. Errors about keys that
// are not on the form are attached to the first field.
func SubmissionErrors(fields []checkpoints.Field, errs []checkpoints.FieldError) map[string]string {
	out := map[string]string{}
	onForm := map[string]bool{}
	for _, f := range fields {
		onForm[f.Key] = true
	}
	for _, e := range errs {
		key := e.Key
		if !onForm[key] {
			if len(fields) == 0 {
				continue
			}
			key = fields[0].Key
		}
		msg := Truncate(e.Message, 150)
		if prev, ok := out[key]; ok {
			msg = Truncate(prev+"; "+msg, 150)
		}
		out[key] = msg
	}
	return out
}

// RejectModal asks why a checkpoint is rejected; the reason is required.
func RejectModal(inst *checkpoints.Instance) slack.ModalViewRequest {
	t := slack.NewPlainTextInputBlockElement(Plain("What should change?", MaxPlaceholder), ValueActionID)
	t.Multiline = true
	t.MaxLength = MaxInputLength
	in := slack.NewInputBlock(ReasonBlockID, Plain("Why are you rejecting this?", MaxInputLabel),
		Plain("The reason goes back to the researcher, who tries again with it.", MaxInputLabel), t)
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  Plain("Reject: "+FirstNonEmpty(inst.Label, "checkpoint"), MaxModalTitle),
		Submit: Plain("Reject", MaxModalTitle),
		Close:  Plain("Cancel", MaxModalTitle),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			Section(fmt.Sprintf("You are rejecting *%s*.", EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 200))),
			in,
		}},
		PrivateMetadata: inst.ID,
		CallbackID:      CallbackReject,
		NotifyOnClose:   true,
	}
}

// RejectReason reads the reason from a submitted Reject modal.
func RejectReason(state map[string]map[string]slack.BlockAction) string {
	return strings.TrimSpace(state[ReasonBlockID][ValueActionID].Value)
}
