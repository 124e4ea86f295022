package llm

// Exported for package llm_test only.

import (
	"encoding/json"
	"reflect"
)

// StrictSchema derives the OpenAI-strict JSON schema of the Go value v (usually
// a pointer to a struct): every property is listed in "required" (fields that
// were optional, e.g. tagged omitempty, become nullable instead),
// additionalProperties is false on every object, and keywords strict mode does
// not support are removed. Maps and interface values cannot be expressed in
// strict mode and are reported as an error naming the field.
func StrictSchema(v any) (json.RawMessage, error) {
	s, err := buildSchema(reflect.TypeOf(v))
	if err != nil {
		return nil, err
	}
	return s.raw, nil
}
