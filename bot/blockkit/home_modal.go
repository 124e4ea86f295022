package blockkit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	if !create {
		title = "Edit checkpoint"
		note := fmt.Sprintf("Editing `%s`.", Escape(d.ID))
		if checkpoints.IsBuiltin(d.ID) {
			note += " It is built in: its fields' keys and types stay, the rest can change."
		}
		blocks = append(blocks, ContextText(note))
	}
	slots := max(min(max(len(d.Fields)+2, minFieldSlots), maxFieldSlots), len(d.Fields))
	var modes []string // in the options' order
	for _, o := range modeOptions() {
		if slices.Contains(d.Modes, o.Value) {
			modes = append(modes, o.Value)
		}
	}
	values := map[string]any{
		DefIDBlock: d.ID, defLabelBlock: d.Label, defDescBlock: d.Description, defPositionBlock: string(d.Position),
		defSortBlock: strconv.Itoa(d.SortOrder), defModesBlock: modes, defRequiredBlock: ticked(d.Required, requiredValue),
		defTimeoutBlock: durationText(d.Timeout), defOnTimeoutBlock: ticked(d.OnTimeout == checkpoints.TimeoutApprove, string(checkpoints.TimeoutApprove)),
		defRemindersBlock: reminderText(d.Reminders), defRetriesBlock: strconv.Itoa(d.MaxRetries),
		defThresholdBlock: strconv.Itoa(d.BreakerThreshold), defWindowBlock: durationText(d.BreakerWindow),
	}
	for i := range slots {
		var f checkpoints.Field
		if i < len(d.Fields) {
			f = d.Fields[i]
		}
		var opts []string
		for _, o := range f.Options {
			if o.Label != "" && o.Label != o.Value {
				opts = append(opts, o.Value+" | "+o.Label)
			} else {
				opts = append(opts, o.Value)
			}
		}
		for part, v := range map[string]any{
			slotKey: f.Key, slotLabel: f.Label, slotType: string(f.Type), slotRequired: ticked(f.Required, requiredValue),
			slotOptions: strings.Join(opts, "\n"), slotMin: boundText(f.Min), slotMax: boundText(f.Max),
			slotDefault: defaultText(f.Default), slotPlaceholder: f.Placeholder, slotPosition: strconv.Itoa(i + 1),
		} {
			values[slotBlock(i, part)] = v
		}
	}
	blocks = append(blocks, inputs(definitionFields(create, slots), values)...)
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

// modeOptions are the modes a definition form offers.
func modeOptions() []checkpoints.Option {
	return []checkpoints.Option{{Value: checkpoints.ModeGuided, Label: "guided"}, {Value: checkpoints.ModeFull, Label: "full"}, {Value: "*", Label: "every mode"}}
}

// definitionFields are the definition form's inputs: the id (when create),
// the definition's settings, and slots field slots of the builder. Every
// slot's input is optional: a slot left empty adds no field. A slot's
// position (1…slots, its own by default) moves it among the fields when the
// form is saved.
func definitionFields(create bool, slots int) []checkpoints.Field {
	text := func(key, label, help string) checkpoints.Field {
		return checkpoints.Field{Key: key, Type: checkpoints.FieldText, Label: label, Help: help}
	}
	var fs []checkpoints.Field
	if create {
		id := text(DefIDBlock, "Id", "A slug: lower case letters, digits and _, e.g. risk_check. It cannot change later.")
		id.Required = true
		fs = append(fs, id)
	}
	var positions []checkpoints.Option
	for _, p := range []checkpoints.Position{checkpoints.AfterPlanning, checkpoints.AfterSearch, checkpoints.AfterReview, checkpoints.BeforeOutput} {
		positions = append(positions, checkpoints.Option{Value: string(p), Label: strings.ReplaceAll(string(p), "_", " ")})
	}
	fs = append(fs,
		checkpoints.Field{Key: defLabelBlock, Type: checkpoints.FieldText, Label: "Label", Required: true},
		checkpoints.Field{Key: defDescBlock, Type: checkpoints.FieldTextarea, Label: "Description", Help: "What the person is asked to judge."},
		checkpoints.Field{Key: defPositionBlock, Type: checkpoints.FieldSelect, Label: "Position", Required: true, Placeholder: "Where in the run", Options: positions},
		text(defSortBlock, "Sort order", "Lower is asked first among the checkpoints at one position."),
		checkpoints.Field{Key: defModesBlock, Type: checkpoints.FieldCheckbox, Label: "Modes", Required: true, Options: modeOptions()},
		checkpoints.Field{Key: defRequiredBlock, Type: checkpoints.FieldCheckbox, Label: "Required", Help: "Optional ones can be skipped.",
			Options: []checkpoints.Option{{Value: requiredValue, Label: "Required: the run cannot go on until it is decided"}}},
		text(defTimeoutBlock, "Timeout", "e.g. 2h or 30m; empty: no timeout."),
		checkpoints.Field{Key: defOnTimeoutBlock, Type: checkpoints.FieldCheckbox, Label: "When it times out", Help: "Its message says so. Unchecked: a required one is reminded, an optional one skipped.",
			Options: []checkpoints.Option{{Value: string(checkpoints.TimeoutApprove), Label: "Approve itself at the deadline if nobody decides"}}},
		text(defRemindersBlock, "Reminders", "When a required one times out: reminders, backoff factor, longest gap, then who is told — admins, requester or none. Empty: the default, 3, 2, 24h, admins."),
		text(defRetriesBlock, "Retries", "How often it is offered again after failing or timing out."),
		text(defThresholdBlock, "Breaker threshold", "Failures within the window that disable it; 0: no breaker."),
		text(defWindowBlock, "Breaker window", "e.g. 1h."),
	)
	var types, places []checkpoints.Option
	for _, s := range checkpoints.FieldTypeSpecs() {
		types = append(types, checkpoints.Option{Value: string(s.Type), Label: string(s.Type) + " — " + CutRunes(s.Summary, 60)})
	}
	for p := range slots {
		places = append(places, checkpoints.Option{Value: strconv.Itoa(p + 1), Label: strconv.Itoa(p + 1)})
	}
	for i := range slots {
		part := func(part string, typ checkpoints.FieldType, help string) checkpoints.Field {
			return checkpoints.Field{Key: slotBlock(i, part), Type: typ, Label: fmt.Sprintf("Field %d: %s", i+1, part), Help: help}
		}
		typ, req := part(slotType, checkpoints.FieldSelect, ""), part(slotRequired, checkpoints.FieldCheckbox, "")
		typ.Placeholder, typ.Options = "Field type", types
		req.Options = []checkpoints.Option{{Value: requiredValue, Label: "Required"}}
		pos := part(slotPosition, checkpoints.FieldSelect, "To move this field, pick the place it should take; the other fields keep their order around it.")
		pos.Placeholder, pos.Options = "Position", places
		fs = append(fs,
			part(slotKey, checkpoints.FieldText, "A slug, e.g. risk_level. Leave the slot empty for no field."),
			part(slotLabel, checkpoints.FieldText, ""), typ, req,
			part(slotOptions, checkpoints.FieldTextarea, "One per line: value | label. For select, multi_select, radio, checkbox, chips."),
			part(slotMin, checkpoints.FieldText, "number and range: the lowest value; lists: the fewest choices."),
			part(slotMax, checkpoints.FieldText, ""),
			part(slotDefault, checkpoints.FieldText, "Lists: comma-separated values; checkbox without options: true or false."),
			part(slotPlaceholder, checkpoints.FieldText, ""), pos)
	}
	return fs
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
	gap = cmp.Or(gap, "0")
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
// slots maps each field's index to its slot. The inputs are text where the
// definition holds a number, a duration or a reminder policy, read here;
// checkpoints.DefinitionProblems validates what they make.
func ParseDefinitionForm(meta DefinitionMeta, base checkpoints.Definition, state map[string]map[string]slack.BlockAction) (checkpoints.Definition, []int, map[string]string) {
	errs := map[string]string{}
	n := min(meta.Slots, maxFieldSlots)
	v := formValues(ParseSubmission(definitionFields(meta.ID == "", n), state))
	d := base
	if meta.ID == "" {
		d.ID = v.text(DefIDBlock)
		d.ControlType = d.ID
	}
	d.Label, d.Description = v.text(defLabelBlock), v.text(defDescBlock)
	d.Position = checkpoints.Position(v.raw(defPositionBlock))
	d.Modes = v.list(defModesBlock)
	d.Required = len(v.list(defRequiredBlock)) > 0
	d.OnTimeout = checkpoints.TimeoutRemind
	if len(v.list(defOnTimeoutBlock)) > 0 {
		d.OnTimeout = checkpoints.TimeoutApprove
	}
	// Empty is 0; a value that does not parse leaves base's, and says so.
	for block, dst := range map[string]*int{defSortBlock: &d.SortOrder, defRetriesBlock: &d.MaxRetries, defThresholdBlock: &d.BreakerThreshold} {
		if x, err := strconv.Atoi(cmp.Or(v.text(block), "0")); err == nil {
			*dst = x
		} else {
			errs[block] = "Must be a whole number."
		}
	}
	for block, dst := range map[string]*time.Duration{defTimeoutBlock: &d.Timeout, defWindowBlock: &d.BreakerWindow} {
		if x, err := time.ParseDuration(cmp.Or(v.text(block), "0")); err == nil {
			*dst = x
		} else {
			errs[block] = "Must be a duration such as 2h or 30m."
		}
	}
	if p, ok := parseReminders(v.text(defRemindersBlock)); ok {
		d.Reminders = p
	} else {
		errs[defRemindersBlock] = "Write four values: reminders, backoff factor, longest gap, who is told — e.g. 3, 2, 24h, admins."
	}

	d.Fields = nil
	var placed []placedField
	for i := range n {
		f, ok := parseSlot(i, base, v, errs)
		if !ok {
			continue
		}
		pos := i + 1
		if s := v.raw(slotBlock(i, slotPosition)); s != "" {
			p, err := strconv.Atoi(s)
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
func parseSlot(i int, base checkpoints.Definition, v formValues, errs map[string]string) (checkpoints.Field, bool) {
	text := func(part string) string { return v.text(slotBlock(i, part)) }
	f := checkpoints.Field{
		Key: text(slotKey), Label: text(slotLabel), Type: checkpoints.FieldType(v.raw(slotBlock(i, slotType))),
		Required: len(v.list(slotBlock(i, slotRequired))) > 0, Placeholder: text(slotPlaceholder),
	}
	opts, def, lo, hi := text(slotOptions), text(slotDefault), text(slotMin), text(slotMax)
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
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			errs[slotBlock(i, part)] = "Must be a number."
			return nil
		}
		return &x
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

// fieldPath matches a problem's path inside field_schema; built on first
// use, not at start (see TestPackageInitIsLight).
var fieldPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^field_schema\[(\d+)\]\.?([a-z_]*)`) })

// DefinitionErrors places definition problems on the form's blocks; slots
// maps field indexes to slots. Several problems on one block are joined.
func DefinitionErrors(ps []checkpoints.Problem, slots []int, create bool) map[string]string {
	top := map[string]string{
		"id": DefIDBlock, "control_type": DefIDBlock, "label": defLabelBlock, "description": defDescBlock,
		"pipeline_position": defPositionBlock, "sort_order": defSortBlock, "applicable_modes": defModesBlock,
		"timeout_seconds": defTimeoutBlock, "on_timeout": defOnTimeoutBlock, "reminders": defRemindersBlock, "max_retries": defRetriesBlock,
		"circuit_breaker_threshold": defThresholdBlock, "circuit_breaker_window_minutes": defWindowBlock,
	}
	out := map[string]string{}
	for _, p := range ps {
		block := defLabelBlock
		if m := fieldPath().FindStringSubmatch(p.Path); m != nil {
			idx, _ := strconv.Atoi(m[1])
			part := m[2]
			if !slices.Contains([]string{slotLabel, slotType, slotRequired, slotOptions, slotMin, slotMax, slotDefault, slotPlaceholder}, part) {
				part = slotKey // a setting the form does not show
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
