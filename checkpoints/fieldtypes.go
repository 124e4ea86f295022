package checkpoints

// FieldTypeSpec says what a field type is for and which of a field's
// settings it takes, for admins (researchbot checkpoints fields, the App
// Home field builder). DefinitionProblems enforces the same rules; a test
// holds the two together.
type FieldTypeSpec struct {
	Type FieldType `json:"type"`
	// Summary says what a person sees and what the value is.
	Summary string `json:"summary"`
	// Options is "required", "optional" or "none".
	Options string `json:"options"`
	// Bounds says what min and max mean, or "none".
	Bounds string `json:"min_max"`
	// Settings lists the other keys the type takes beyond key, type, label,
	// help, required and default.
	Settings []string `json:"settings,omitempty"`
}

// FieldTypeSpecs describes the nine field types, in FieldTypes' order.
func FieldTypeSpecs() []FieldTypeSpec {
	return []FieldTypeSpec{
		{Type: FieldText, Summary: "one line of text; value: a string", Options: "none", Bounds: "none", Settings: []string{"placeholder", "max_length"}},
		{Type: FieldTextarea, Summary: "several lines of text; value: a string", Options: "none", Bounds: "none", Settings: []string{"placeholder", "max_length"}},
		{Type: FieldSelect, Summary: "a menu, pick one; value: an option's value", Options: "required (or runtime_options)", Bounds: "none", Settings: []string{"placeholder", "runtime_options"}},
		{Type: FieldMultiSelect, Summary: "a menu, pick several; value: a list of option values", Options: "required (or runtime_options)", Bounds: "optional: how many to pick", Settings: []string{"placeholder", "runtime_options"}},
		{Type: FieldCheckbox, Summary: "with options, tick several (a list of values); without, one yes/no box (true or false)", Options: "optional", Bounds: "optional: how many to tick (with options)", Settings: []string{"runtime_options"}},
		{Type: FieldRadio, Summary: "buttons, pick one; value: an option's value", Options: "required (or runtime_options)", Bounds: "none", Settings: []string{"runtime_options"}},
		{Type: FieldNumber, Summary: "a number; value: a number", Options: "none", Bounds: "optional: the lowest and highest number", Settings: []string{"placeholder"}},
		{Type: FieldRange, Summary: "a number on a scale; value: a number", Options: "none", Bounds: "required: both ends of the scale", Settings: []string{"placeholder"}},
		{Type: FieldChips, Summary: "tags: some of the options, or free tags when there are none; value: a list of strings", Options: "optional", Bounds: "optional: how many tags", Settings: []string{"placeholder", "runtime_options"}},
	}
}
