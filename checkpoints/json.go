package checkpoints

import "encoding/json"

// UnmarshalJSON decodes an instance and restores the value types Validate
// produces, which JSON loses: a multi-valued field's []any becomes []string
// again. It applies to field defaults, Values, Decision.Values and the
// audit's changes, by the instance's own Fields; values it cannot repair are
// kept as decoded. Values is never nil after decoding.
func (in *Instance) UnmarshalJSON(data []byte) error {
	type plain Instance // no methods: no recursion
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*in = Instance(p)
	for i, f := range in.Fields {
		in.Fields[i].Default = coerce(f, f.Default)
	}
	in.Values = coerceValues(in.Fields, in.Values)
	if in.Values == nil {
		in.Values = map[string]any{}
	}
	if in.Decision != nil {
		in.Decision.Values = coerceValues(in.Fields, in.Decision.Values)
	}
	for i := range in.Audit {
		for j, c := range in.Audit[i].Changes {
			if f, ok := fieldByKey(in.Fields, c.Key); ok {
				in.Audit[i].Changes[j].Before = coerce(f, c.Before)
				in.Audit[i].Changes[j].After = coerce(f, c.After)
			}
		}
	}
	return nil
}
