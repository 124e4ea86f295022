package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	invopop "github.com/invopop/jsonschema"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiledSchema is the strict JSON schema of one Go type, both as sent to the
// provider and compiled for validating replies.
type compiledSchema struct {
	raw       json.RawMessage
	validator *jsonschema.Schema
}

// supportedFormat reports whether OpenAI strict mode accepts the string format
// f; other formats are dropped from the schema sent to the provider.
func supportedFormat(f string) bool {
	switch f {
	case "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid":
		return true
	}
	return false
}

func buildSchema(t reflect.Type) (*compiledSchema, error) {
	if t == nil {
		return nil, fmt.Errorf("llm: out must be a pointer to a struct, got nil")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("llm: out must be a pointer to a struct, got %s", t)
	}
	raw, err := reflectSchema(t, false)
	if err != nil {
		return nil, err
	}
	// Replies are validated against a lenient twin: fields that were optional
	// in Go may also be absent (servers that do not enforce strict mode omit
	// them, and so does encoding/json for omitempty), everything else is the
	// same.
	lenient, err := reflectSchema(t, true)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(lenient))
	if err != nil {
		return nil, fmt.Errorf("llm: reparse schema of %s: %w", t, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const loc = "mem://llm/schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("llm: schema of %s: %w", t, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("llm: compile schema of %s: %w", t, err)
	}
	return &compiledSchema{raw: raw, validator: sch}, nil
}

// reflectSchema derives the schema of t and makes it strict. With lenient,
// properties that were optional stay out of "required".
func reflectSchema(t reflect.Type, lenient bool) (json.RawMessage, error) {
	r := &invopop.Reflector{ExpandedStruct: true}
	root := r.ReflectFromType(t)
	root.Version = ""
	root.ID = ""
	if err := strictify(root, "$", lenient); err != nil {
		return nil, err
	}
	for name, def := range root.Definitions {
		if err := strictify(def, "$defs."+name, lenient); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("llm: marshal schema of %s: %w", t, err)
	}
	return raw, nil
}

// strictify rewrites s in place into the subset of JSON Schema that OpenAI's
// strict structured outputs accept. With lenient, "required" keeps only the
// properties that were required in Go.
func strictify(s *invopop.Schema, path string, lenient bool) error {
	if s == nil {
		return nil
	}
	if s == invopop.TrueSchema || s == invopop.FalseSchema {
		return fmt.Errorf("llm: schema at %s has no concrete type (interface values are not supported in strict mode)", path)
	}
	if s.Ref != "" {
		// Strict mode rejects keywords beside $ref.
		*s = invopop.Schema{Ref: s.Ref}
		return nil
	}
	if len(s.PatternProperties) > 0 || (s.AdditionalProperties != nil && s.AdditionalProperties != invopop.FalseSchema) {
		return fmt.Errorf("llm: schema at %s is a map, which strict mode cannot express; use a slice of key/value structs", path)
	}
	// Keep only keywords strict mode supports.
	kept := invopop.Schema{
		Ref:              s.Ref,
		Definitions:      s.Definitions,
		AnyOf:            append(s.AnyOf, s.OneOf...),
		Items:            s.Items,
		Properties:       s.Properties,
		Type:             s.Type,
		Enum:             s.Enum,
		Const:            s.Const,
		MultipleOf:       s.MultipleOf,
		Maximum:          s.Maximum,
		ExclusiveMaximum: s.ExclusiveMaximum,
		Minimum:          s.Minimum,
		ExclusiveMinimum: s.ExclusiveMinimum,
		Pattern:          s.Pattern,
		MaxItems:         s.MaxItems,
		MinItems:         s.MinItems,
		Description:      s.Description,
	}
	if supportedFormat(s.Format) {
		kept.Format = s.Format
	}
	required := s.Required
	*s = kept
	if s.Type == "" && len(s.AnyOf) == 0 && s.Enum == nil && s.Const == nil {
		return fmt.Errorf("llm: schema at %s has no concrete type (interface values are not supported in strict mode)", path)
	}
	for i, alt := range s.AnyOf {
		if err := strictify(alt, fmt.Sprintf("%s.anyOf[%d]", path, i), lenient); err != nil {
			return err
		}
	}
	if s.Items != nil {
		if err := strictify(s.Items, path+"[]", lenient); err != nil {
			return err
		}
	}
	if s.Type == "object" || s.Properties != nil {
		s.AdditionalProperties = invopop.FalseSchema
		if s.Properties == nil {
			s.Properties = invopop.NewProperties()
		}
		all := make([]string, 0, s.Properties.Len())
		for p := s.Properties.Oldest(); p != nil; p = p.Next() {
			all = append(all, p.Key)
			if err := strictify(p.Value, path+"."+p.Key, lenient); err != nil {
				return err
			}
			if !slices.Contains(required, p.Key) {
				p.Value = nullable(p.Value)
			}
		}
		s.Required = all
		if lenient {
			s.Required = slices.DeleteFunc(all, func(k string) bool { return !slices.Contains(required, k) })
		}
	}
	return nil
}

// nullable wraps s so that null is also accepted: strict mode needs every
// property required, so optional fields are expressed as "may be null".
func nullable(s *invopop.Schema) *invopop.Schema {
	if s.Type == "null" {
		return s
	}
	desc := s.Description
	inner := *s
	inner.Description = ""
	return &invopop.Schema{
		AnyOf:       []*invopop.Schema{&inner, {Type: "null"}},
		Description: desc,
	}
}

// validate checks raw (the model's reply) against the schema and returns the
// problems found, in a form fit to show the model during repair. An empty
// result means the reply is valid.
func (s *compiledSchema) validate(raw string) []string {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return []string{"reply is not valid JSON: " + err.Error()}
	}
	err = s.validator.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var problems []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") {
			continue // a summary line for a nested failure listed separately
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		problems = append(problems, fmt.Sprintf("at %s: %s", loc, msg))
	}
	if len(problems) == 0 {
		problems = []string{ve.Error()}
	}
	return problems
}
