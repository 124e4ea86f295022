package blockkit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
)

// CallbackDefinition is the callback id of the admin's create/edit form.
const CallbackDefinition = "cp_definition"

// Block ids of the definition form; every input's action id is StartInput.
const (
	DefIDBlock        = "def_id"
	defLabelBlock     = "def_label"
	defDescBlock      = "def_description"
	defPositionBlock  = "def_position"
	defSortBlock      = "def_sort"
	defModesBlock     = "def_modes"
	defRequiredBlock  = "def_required"
	defTimeoutBlock   = "def_timeout"
	defOnTimeoutBlock = "def_on_timeout"
	defRetriesBlock   = "def_retries"
	defRemindersBlock = "def_reminders"
	defThresholdBlock = "def_breaker_threshold"
	defWindowBlock    = "def_breaker_window"
	requiredValue     = "required"
	// maxFieldSlots bounds the field builder (Slack allows 100 blocks).
	maxFieldSlots = 8
	// minFieldSlots is how many slots a new definition's form offers.
	minFieldSlots = 4
)

// The parts of one field slot of the builder, block id "f<slot>_<part>".
const (
	slotKey         = "key"
	slotLabel       = "label"
	slotType        = "type"
	slotRequired    = "required"
	slotOptions     = "options"
	slotMin         = "min"
	slotMax         = "max"
	slotDefault     = "default"
	slotPlaceholder = "placeholder"
	// slotPosition moves a field: the place it takes among the fields.
	slotPosition = "position"
)

// slotBlock is the block id of one part of field slot slot of the builder.
func slotBlock(slot int, part string) string { return fmt.Sprintf("f%d_%s", slot, part) }

// DefinitionMeta is the form's private_metadata.
type DefinitionMeta struct {
	ID    string `json:"id,omitempty"` // "" creates a definition
	Slots int    `json:"slots"`
}

// DefinitionModal renders the admin's form for a definition: d pre-fills it
// (zero for a new one, whose id is asked). The field builder shows d's
// fields and empty slots for new ones, up to maxFieldSlots.
func DefinitionModal(d checkpoints.Definition, create bool) slack.ModalViewRequest {
	var blocks []slack.Block
	title := "New checkpoint"
	if create {
		blocks = append(blocks, textInput(DefIDBlock, "Id", "A slug: lower case letters, digits and _, e.g. risk_check. It cannot change later.", d.ID, false, false))
	} else {
		title = "Edit checkpoint"
		note := fmt.Sprintf("Editing `%s`.", Escape(d.ID))
		if checkpoints.IsBuiltin(d.ID) {
			note += " It is built in: its fields' keys and types stay, the rest can change."
		}
		blocks = append(blocks, ContextText(note))
	}
	blocks = append(blocks,
		textInput(defLabelBlock, "Label", "", d.Label, false, false),
		textInput(defDescBlock, "Description", "What the person is asked to judge.", d.Description, true, true),
	)
	var positions []*slack.OptionBlockObject
	for _, p := range []checkpoints.Position{checkpoints.AfterPlanning, checkpoints.AfterSearch, checkpoints.AfterReview, checkpoints.BeforeOutput} {
		positions = append(positions, option(string(p), strings.ReplaceAll(string(p), "_", " ")))
	}
	pos := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, Plain("Where in the run", 150), StartInput, positions...)
	for _, o := range positions {
		if o.Value == string(d.Position) {
			pos.InitialOption = o
		}
	}
	blocks = append(blocks, slack.NewInputBlock(defPositionBlock, Plain("Position", 2000), nil, pos))
	blocks = append(blocks, textInput(defSortBlock, "Sort order", "Lower is asked first among the checkpoints at one position.", strconv.Itoa(d.SortOrder), false, true))

	modes := []*slack.OptionBlockObject{option(checkpoints.ModeGuided, "guided"), option(checkpoints.ModeFull, "full"), option("*", "every mode")}
	boxes := slack.NewCheckboxGroupsBlockElement(StartInput, modes...)
	for _, o := range modes {
		for _, m := range d.Modes {
			if o.Value == m {
				boxes.InitialOptions = append(boxes.InitialOptions, o)
			}
		}
	}
	blocks = append(blocks, slack.NewInputBlock(defModesBlock, Plain("Modes", 2000), nil, boxes))
	req := option(requiredValue, "Required: the run cannot go on until it is decided")
	reqBox := slack.NewCheckboxGroupsBlockElement(StartInput, req)
	if d.Required {
		reqBox.InitialOptions = []*slack.OptionBlockObject{req}
	}
	rin := slack.NewInputBlock(defRequiredBlock, Plain("Required", 2000), Plain("Optional ones can be skipped.", 2000), reqBox)
	rin.Optional = true
	selfApprove := option(string(checkpoints.TimeoutApprove), "Approve itself at the deadline if nobody decides")
	selfBox := slack.NewCheckboxGroupsBlockElement(StartInput, selfApprove)
	if d.OnTimeout == checkpoints.TimeoutApprove {
		selfBox.InitialOptions = []*slack.OptionBlockObject{selfApprove}
	}
	tin := slack.NewInputBlock(defOnTimeoutBlock, Plain("When it times out", 2000), Plain("Its message says so. Unchecked: a required one is reminded, an optional one skipped.", 2000), selfBox)
	tin.Optional = true
	blocks = append(blocks, rin,
		textInput(defTimeoutBlock, "Timeout", "e.g. 2h or 30m; empty: no timeout.", durationText(d.Timeout), false, true),
		tin,
		textInput(defRemindersBlock, "Reminders", "When a required one times out: reminders, backoff factor, longest gap, then who is told — admins, requester or none. Empty: the default, 3, 2, 24h, admins.", reminderText(d.Reminders), false, true),
		textInput(defRetriesBlock, "Retries", "How often it is offered again after failing or timing out.", strconv.Itoa(d.MaxRetries), false, true),
		textInput(defThresholdBlock, "Breaker threshold", "Failures within the window that disable it; 0: no breaker.", strconv.Itoa(d.BreakerThreshold), false, true),
		textInput(defWindowBlock, "Breaker window", "e.g. 1h.", durationText(d.BreakerWindow), false, true),
	)
	slots := max(min(max(len(d.Fields)+2, minFieldSlots), maxFieldSlots), len(d.Fields))
	for i := range slots {
		var f checkpoints.Field
		if i < len(d.Fields) {
			f = d.Fields[i]
		}
		blocks = append(blocks, fieldSlot(i, f, slots)...)
	}
	md, _ := json.Marshal(DefinitionMeta{ID: map[bool]string{true: "", false: d.ID}[create], Slots: slots})
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackDefinition,
		Title:           Plain(title, MaxModalTitle),
		Submit:          Plain("Save", MaxModalTitle),
		Close:           Plain("Cancel", MaxModalTitle),
		PrivateMetadata: string(md),
		Blocks:          slack.Blocks{BlockSet: blocks},
	}
}

// textInput is an optional or required Plain text input.
func textInput(blockID, label, hint, value string, multiline, optional bool) *slack.InputBlock {
	el := slack.NewPlainTextInputBlockElement(nil, StartInput)
	el.Multiline = multiline
	el.InitialValue = value
	var h *slack.TextBlockObject
	if hint != "" {
		h = Plain(hint, 2000)
	}
	in := slack.NewInputBlock(blockID, Plain(label, 2000), h, el)
	in.Optional = optional
	return in
}

// durationText writes a duration for the form ("" for none).
func durationText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// reminderText is a reminder policy as the form writes it, "3, 2, 24h,
// admins"; "" for the default (nil).
func reminderText(p *checkpoints.ReminderPolicy) string {
	if p == nil {
		return ""
	}
	gap := durationText(p.MaxInterval)
	if gap == "" {
		gap = "0"
	}
	return fmt.Sprintf("%d, %d, %s, %s", p.Count, p.Factor, gap, p.Escalate)
}

// parseReminders reads reminderText's form; "" (or the default written out)
// is nil, the default; ok is false when s is not of that form. Bounds are
// checkpoints.Validate's.
func parseReminders(s string) (p *checkpoints.ReminderPolicy, ok bool) {
	if s == "" {
		return nil, true
	}
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return nil, false
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	var pol checkpoints.ReminderPolicy
	var err1, err2, err3 error
	pol.Count, err1 = strconv.Atoi(parts[0])
	pol.Factor, err2 = strconv.Atoi(parts[1])
	if parts[2] != "0" {
		pol.MaxInterval, err3 = time.ParseDuration(parts[2])
	}
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, false
	}
	pol.Escalate = checkpoints.Escalation(strings.ToLower(parts[3]))
	if pol == checkpoints.DefaultReminders() {
		return nil, true
	}
	return &pol, true
}

// fieldSlot renders one field of the builder, slot i of slots; an empty
// field is a slot for a new one. Every input is optional: a slot left empty
// adds no field. Its position (1…slots, its own by default) moves it among
// the fields when the form is saved.
func fieldSlot(i int, f checkpoints.Field, slots int) []slack.Block {
	var types []*slack.OptionBlockObject
	for _, s := range checkpoints.FieldTypeSpecs() {
		types = append(types, option(string(s.Type), string(s.Type)+" — "+CutRunes(s.Summary, 60)))
	}
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, Plain("Field type", 150), StartInput, types...)
	for _, o := range types {
		if o.Value == string(f.Type) {
			sel.InitialOption = o
		}
	}
	n := i + 1
	tin := slack.NewInputBlock(slotBlock(i, slotType), Plain(fmt.Sprintf("Field %d: type", n), 2000), nil, sel)
	tin.Optional = true
	req := option(requiredValue, "Required")
	box := slack.NewCheckboxGroupsBlockElement(StartInput, req)
	if f.Required {
		box.InitialOptions = []*slack.OptionBlockObject{req}
	}
	rin := slack.NewInputBlock(slotBlock(i, slotRequired), Plain(fmt.Sprintf("Field %d: required", n), 2000), nil, box)
	rin.Optional = true
	var places []*slack.OptionBlockObject
	for p := range slots {
		places = append(places, option(strconv.Itoa(p+1), strconv.Itoa(p+1)))
	}
	place := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, Plain("Position", 150), StartInput, places...)
	place.InitialOption = places[i]
	pin := slack.NewInputBlock(slotBlock(i, slotPosition), Plain(fmt.Sprintf("Field %d: position", n), 2000),
		Plain("To move this field, pick the place it should take; the other fields keep their order around it.", 2000), place)
	pin.Optional = true
	var opts []string
	for _, o := range f.Options {
		if o.Label != "" && o.Label != o.Value {
			opts = append(opts, o.Value+" | "+o.Label)
		} else {
			opts = append(opts, o.Value)
		}
	}
	return []slack.Block{
		textInput(slotBlock(i, slotKey), fmt.Sprintf("Field %d: key", n), "A slug, e.g. risk_level. Leave the slot empty for no field.", f.Key, false, true),
		textInput(slotBlock(i, slotLabel), fmt.Sprintf("Field %d: label", n), "", f.Label, false, true),
		tin, rin,
		textInput(slotBlock(i, slotOptions), fmt.Sprintf("Field %d: options", n), "One per line: value | label. For select, multi_select, radio, checkbox, chips.", strings.Join(opts, "\n"), true, true),
		textInput(slotBlock(i, slotMin), fmt.Sprintf("Field %d: min", n), "number and range: the lowest value; lists: the fewest choices.", boundText(f.Min), false, true),
		textInput(slotBlock(i, slotMax), fmt.Sprintf("Field %d: max", n), "", boundText(f.Max), false, true),
		textInput(slotBlock(i, slotDefault), fmt.Sprintf("Field %d: default", n), "Lists: comma-separated values; checkbox without options: true or false.", defaultText(f.Default), false, true),
		textInput(slotBlock(i, slotPlaceholder), fmt.Sprintf("Field %d: placeholder", n), "", f.Placeholder, false, true),
		pin,
	}
}

func boundText(b *float64) string {
	if b == nil {
		return ""
	}
	return strconv.FormatFloat(*b, 'f', -1, 64)
}

func defaultText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []string:
		return strings.Join(x, ", ")
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ", ")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// ParseDefinitionForm reads a submitted definition form over base (the
// definition being edited, or zero): what the form does not show (actions,
// a field's help, max length and runtime options) is kept from base.
// Problems are keyed by block id, ready for a response_action "errors";
// slots maps each field's index to its slot.
func ParseDefinitionForm(meta DefinitionMeta, base checkpoints.Definition, state map[string]map[string]slack.BlockAction) (checkpoints.Definition, []int, map[string]string) {
	errs := map[string]string{}
	get := func(block string) slack.BlockAction { return state[block][StartInput] }
	text := func(block string) string { return strings.TrimSpace(Visible(get(block).Value)) }
	d := base
	if meta.ID == "" {
		d.ID = text(DefIDBlock)
		d.ControlType = d.ID
	}
	d.Label, d.Description = text(defLabelBlock), text(defDescBlock)
	d.Position = checkpoints.Position(get(defPositionBlock).SelectedOption.Value)
	d.Modes = optionValues(get(defModesBlock).SelectedOptions)
	d.Required = len(get(defRequiredBlock).SelectedOptions) > 0
	d.OnTimeout = checkpoints.TimeoutRemind
	if len(get(defOnTimeoutBlock).SelectedOptions) > 0 {
		d.OnTimeout = checkpoints.TimeoutApprove
	}
	whole := func(block string, dst *int) {
		s := text(block)
		if s == "" {
			*dst = 0
			return
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			errs[block] = "Must be a whole number."
			return
		}
		*dst = n
	}
	whole(defSortBlock, &d.SortOrder)
	whole(defRetriesBlock, &d.MaxRetries)
	whole(defThresholdBlock, &d.BreakerThreshold)
	dur := func(block string, dst *time.Duration) {
		s := text(block)
		if s == "" {
			*dst = 0
			return
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			errs[block] = "Must be a duration such as 2h or 30m."
			return
		}
		*dst = v
	}
	dur(defTimeoutBlock, &d.Timeout)
	dur(defWindowBlock, &d.BreakerWindow)
	if p, ok := parseReminders(text(defRemindersBlock)); ok {
		d.Reminders = p
	} else {
		errs[defRemindersBlock] = "Write four values: reminders, backoff factor, longest gap, who is told — e.g. 3, 2, 24h, admins."
	}

	d.Fields = nil
	var placed []placedField
	n := min(meta.Slots, maxFieldSlots)
	for i := range n {
		f, ok := parseSlot(i, base, text, get, errs)
		if !ok {
			continue
		}
		pos := i + 1
		if v := get(slotBlock(i, slotPosition)).SelectedOption.Value; v != "" {
			p, err := strconv.Atoi(v)
			if err != nil || p < 1 || p > n {
				errs[slotBlock(i, slotPosition)] = fmt.Sprintf("Pick a position from 1 to %d.", n)
			} else {
				pos = p
			}
		}
		placed = append(placed, placedField{field: f, slot: i, pos: pos})
	}
	var slots []int
	for _, p := range orderFields(placed) {
		d.Fields = append(d.Fields, p.field)
		slots = append(slots, p.slot)
	}
	if len(d.Actions) == 0 && len(d.Fields) == 0 {
		d.Actions = []checkpoints.Action{checkpoints.Approve, checkpoints.Reject}
	}
	return d, slots, errs
}

// placedField is a field of the form, its slot and the position picked for it.
type placedField struct {
	field checkpoints.Field
	slot  int
	pos   int // 1-based; slot+1 unless the field is moved
}

// orderFields puts the fields in the order their positions say. A field
// moved up goes before one that stays at that place, a field moved down
// after it, so moving one field shifts the others around it; fields that
// tie otherwise keep the order of their slots.
func orderFields(placed []placedField) []placedField {
	moved := func(p placedField) int { return cmp.Compare(p.pos, p.slot+1) } // -1 up, 0 stays, 1 down
	out := slices.Clone(placed)
	slices.SortStableFunc(out, func(a, b placedField) int {
		return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(moved(a), moved(b)))
	})
	return out
}

// parseSlot reads one field slot; ok is false for an empty slot.
func parseSlot(i int, base checkpoints.Definition, text func(string) string, get func(string) slack.BlockAction, errs map[string]string) (checkpoints.Field, bool) {
	f := checkpoints.Field{
		Key: text(slotBlock(i, slotKey)), Label: text(slotBlock(i, slotLabel)),
		Type:        checkpoints.FieldType(get(slotBlock(i, slotType)).SelectedOption.Value),
		Required:    len(get(slotBlock(i, slotRequired)).SelectedOptions) > 0,
		Placeholder: text(slotBlock(i, slotPlaceholder)),
	}
	opts, def := text(slotBlock(i, slotOptions)), text(slotBlock(i, slotDefault))
	lo, hi := text(slotBlock(i, slotMin)), text(slotBlock(i, slotMax))
	if f.Key == "" && f.Label == "" && f.Type == "" && opts == "" && def == "" && lo == "" && hi == "" && f.Placeholder == "" {
		return f, false
	}
	for _, old := range base.Fields {
		if old.Key == f.Key {
			f.Help, f.MaxLength, f.RuntimeOptions = old.Help, old.MaxLength, old.RuntimeOptions
		}
	}
	for line := range strings.SplitSeq(opts, "\n") {
		value, label, _ := strings.Cut(line, "|")
		value, label = strings.TrimSpace(value), strings.TrimSpace(label)
		if value == "" && label == "" {
			continue
		}
		f.Options = append(f.Options, checkpoints.Option{Value: value, Label: FirstNonEmpty(label, value)})
	}
	bound := func(s, part string) *float64 {
		if s == "" {
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			errs[slotBlock(i, part)] = "Must be a number."
			return nil
		}
		return &v
	}
	f.Min, f.Max = bound(lo, slotMin), bound(hi, slotMax)
	if def != "" {
		var raw any = def
		if f.Type == checkpoints.FieldMultiSelect || f.Type == checkpoints.FieldChips || (f.Type == checkpoints.FieldCheckbox && len(f.Options) > 0) {
			raw = splitTags(def)
		}
		probe := f
		probe.Required = false
		if v, problems := checkpoints.Validate([]checkpoints.Field{probe}, map[string]any{f.Key: raw}); len(problems) == 0 {
			raw = v[f.Key]
		}
		f.Default = raw
	}
	return f, true
}

// fieldPath matches a problem's path inside field_schema.
var fieldPath = regexp.MustCompile(`^field_schema\[(\d+)\]\.?([a-z_]*)`)

// DefinitionErrors places definition problems on the form's blocks; slots
// maps field indexes to slots. Several problems on one block are joined.
func DefinitionErrors(ps []checkpoints.Problem, slots []int, create bool) map[string]string {
	top := map[string]string{
		"id": DefIDBlock, "control_type": DefIDBlock, "label": defLabelBlock, "description": defDescBlock,
		"pipeline_position": defPositionBlock, "sort_order": defSortBlock, "applicable_modes": defModesBlock,
		"timeout_seconds": defTimeoutBlock, "on_timeout": defOnTimeoutBlock, "reminders": defRemindersBlock, "max_retries": defRetriesBlock,
		"circuit_breaker_threshold": defThresholdBlock, "circuit_breaker_window_minutes": defWindowBlock,
	}
	parts := map[string]string{slotKey: slotKey, slotLabel: slotLabel, slotType: slotType, slotRequired: slotRequired,
		slotOptions: slotOptions, slotMin: slotMin, slotMax: slotMax, slotDefault: slotDefault, slotPlaceholder: slotPlaceholder}
	out := map[string]string{}
	for _, p := range ps {
		block := defLabelBlock
		if m := fieldPath.FindStringSubmatch(p.Path); m != nil {
			idx, _ := strconv.Atoi(m[1])
			part := parts[m[2]]
			if part == "" {
				part = slotKey
			}
			if idx < len(slots) {
				block = slotBlock(slots[idx], part)
			}
		} else if b, ok := top[strings.SplitN(strings.SplitN(p.Path, "[", 2)[0], ".", 2)[0]]; ok {
			block = b
		} else if p.Path == "field_schema" && len(slots) > 0 {
			block = slotBlock(slots[0], slotKey)
		}
		if block == DefIDBlock && !create {
			block = defLabelBlock
		}
		msg := p.Message
		if prev, ok := out[block]; ok {
			msg = prev + "; " + msg
		}
		out[block] = CutRunes(msg, 2000)
	}
	return out
}
