package llm

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	invopop "github.com/invopop/jsonschema"
)

// compiledSchema is the strict JSON schema of one Go type, both as sent to the
// provider and resolved for validating replies.
//
// Schemas are derived with invopop/jsonschema (its output is what the
// provider sees) and replies are validated with google/jsonschema-go, the
// validator the MCP SDK links anyway. That validator ignores "format" (see
// its package documentation): a time.Time field's date-time is checked when
// the valid reply is decoded into the Go value (decodeInto), and no reply
// type uses another format.
type compiledSchema struct {
	raw json.RawMessage
	// lenient is the parsed lenient twin that replies are validated
	// against; it is only read once resolved.
	lenient   *jsonschema.Schema
	validator *jsonschema.Resolved
	// shells holds, per node of lenient that a problem was searched in,
	// its resolved shell (see locate).
	shells sync.Map // *jsonschema.Schema -> *jsonschema.Resolved
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
	doc := new(jsonschema.Schema)
	if err := json.Unmarshal(lenient, doc); err != nil {
		return nil, fmt.Errorf("llm: reparse schema of %s: %w", t, err)
	}
	res, err := doc.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("llm: resolve schema of %s: %w", t, err)
	}
	return &compiledSchema{raw: raw, lenient: doc, validator: res}, nil
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
// problems found, in a form fit to show the model during repair: one line
// per problem, "at <JSON pointer>: <message>". An empty result means the
// reply is valid.
func (s *compiledSchema) validate(raw string) []string {
	var inst any
	if err := json.Unmarshal([]byte(raw), &inst); err != nil {
		return []string{"reply is not valid JSON: " + err.Error()}
	}
	err := s.validator.Validate(inst)
	if err == nil {
		return nil
	}
	// The validator stops at the first problem and names it by its place in
	// the schema, not in the reply; locate finds each one and where it is.
	var problems []string
	s.locate(s.lenient, inst, "", &problems)
	if len(problems) == 0 {
		problems = []string{problem("", err)}
	}
	return problems
}

// locate walks the instance inst, at the JSON pointer ptr, along the schema n
// and appends each problem found to problems. Every object and array is
// validated on its own, its properties or items accepted whatever they are,
// and then each of them is visited in turn; $ref and the "or null" anyOf
// that nullable writes are followed. What locate cannot take apart (another
// anyOf, a reference outside $defs) is validated whole, at its place.
func (s *compiledSchema) locate(n *jsonschema.Schema, inst any, ptr string, problems *[]string) {
	for n.Ref != "" {
		name, ok := strings.CutPrefix(n.Ref, "#/$defs/")
		def := s.lenient.Defs[name]
		if !ok || def == nil {
			s.whole(n, inst, ptr, problems)
			return
		}
		n = def
	}
	if n.AnyOf != nil {
		inner := orNull(n)
		if inner == nil {
			s.whole(n, inst, ptr, problems)
			return
		}
		if inst == nil {
			return
		}
		before := len(*problems)
		s.locate(inner, inst, ptr, problems)
		if len(*problems) > before && strings.HasPrefix((*problems)[before], at(ptr)+"type: ") {
			(*problems)[before] += " (or null)"
		}
		return
	}
	res, err := s.shellOf(n)
	if err != nil {
		s.whole(n, inst, ptr, problems)
		return
	}
	if err := res.Validate(inst); err != nil {
		*problems = append(*problems, at(ptr)+reword(innermost(err), n, inst))
	}
	switch v := inst.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			if n.Properties[k] != nil {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			s.locate(n.Properties[k], v[k], ptr+"/"+escapePointer(k), problems)
		}
	case []any:
		if n.Items != nil {
			for i, item := range v {
				s.locate(n.Items, item, ptr+"/"+strconv.Itoa(i), problems)
			}
		}
	}
}

// whole validates inst against n with everything below it, the lenient
// schema's $defs added so that references resolve, and appends the problem
// found at ptr.
func (s *compiledSchema) whole(n *jsonschema.Schema, inst any, ptr string, problems *[]string) {
	c := n.CloneSchemas()
	c.Defs = make(map[string]*jsonschema.Schema, len(s.lenient.Defs))
	for name, d := range s.lenient.Defs {
		c.Defs[name] = d.CloneSchemas()
	}
	res, err := c.Resolve(nil)
	if err == nil {
		err = res.Validate(inst)
	}
	if err != nil {
		*problems = append(*problems, problem(ptr, err))
	}
}

// shellOf is the resolved shell of n, made the first time it is needed.
func (s *compiledSchema) shellOf(n *jsonschema.Schema) (*jsonschema.Resolved, error) {
	if r, ok := s.shells.Load(n); ok {
		return r.(*jsonschema.Resolved), nil
	}
	r, err := shell(n).Resolve(nil)
	if err != nil {
		return nil, err
	}
	s.shells.Store(n, r)
	return r, nil
}

// shell is n with the schemas of its properties and items replaced by ones
// that accept anything: it checks an object's or array's own rules
// (required, additionalProperties, minItems…) and leaves its contents to
// be checked one by one.
func shell(n *jsonschema.Schema) *jsonschema.Schema {
	c := *n
	c.Defs = nil
	if n.Properties != nil {
		c.Properties = make(map[string]*jsonschema.Schema, len(n.Properties))
		for k := range n.Properties {
			c.Properties[k] = &jsonschema.Schema{}
		}
	}
	if n.Items != nil {
		c.Items = &jsonschema.Schema{}
	}
	c.AdditionalProperties = n.AdditionalProperties.CloneSchemas()
	return &c
}

// orNull returns X when n is exactly {"anyOf": [X, {"type": "null"}]} (a
// description aside), the form nullable writes; otherwise nil.
func orNull(n *jsonschema.Schema) *jsonschema.Schema {
	if len(n.AnyOf) != 2 {
		return nil
	}
	rest := *n
	rest.AnyOf, rest.Description = nil, ""
	null := *n.AnyOf[1]
	null.Type = ""
	if n.AnyOf[1].Type != "null" || !reflect.ValueOf(rest).IsZero() || !reflect.ValueOf(null).IsZero() {
		return nil
	}
	return n.AnyOf[0]
}

// maxProblem is the length past which a problem's message is shortened in
// the middle: the validator quotes the offending value, which may be a
// whole object.
const maxProblem = 240

// problem is the line shown to the model for err at the JSON pointer ptr.
func problem(ptr string, err error) string {
	return at(ptr) + shorten(innermost(err))
}

// innermost is the validator's message without the outer ones wrapped
// around it, which name places in the schema rather than in the reply.
func innermost(err error) string {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	return err.Error()
}

// reword rewrites the validator's message msg about inst, which failed n,
// where its wording misleads: it prints values with %v (the string "3" as
// 3) and numeric bounds as fractions and %f (1.5 as 3/2, 1 as 1.000000).
// Other messages are kept.
func reword(msg string, n *jsonschema.Schema, inst any) string {
	kw, _, _ := strings.Cut(msg, ":")
	val := shorten(jsonText(inst))
	switch kw {
	case "type":
		if i := strings.LastIndex(msg, " has type "); i >= 0 {
			return "type: " + val + msg[i:]
		}
	case "enum":
		return "enum: " + val + " is not one of " + jsonText(n.Enum)
	case "const":
		if n.Const != nil {
			return "const: " + val + " is not " + jsonText(*n.Const)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		bound := map[string]*float64{"minimum": n.Minimum, "maximum": n.Maximum, "exclusiveMinimum": n.ExclusiveMinimum, "exclusiveMaximum": n.ExclusiveMaximum}[kw]
		_, rel, ok := strings.Cut(msg, " is ")
		if i := strings.LastIndex(rel, " "); ok && i >= 0 && bound != nil {
			return kw + ": " + val + " is " + rel[:i] + " " + strconv.FormatFloat(*bound, 'g', -1, 64)
		}
	}
	return shorten(msg)
}

// jsonText is v as JSON, or with %v if it has none.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// shorten cuts msg in the middle when it is longer than maxProblem runes.
func shorten(msg string) string {
	msg = strings.ReplaceAll(msg, "\n", " ")
	if r := []rune(msg); len(r) > maxProblem {
		msg = string(r[:maxProblem/3]) + " … " + string(r[len(r)-maxProblem*2/3:])
	}
	return msg
}

// at is the start of a problem's line: "at <JSON pointer>: ", the root
// written "/".
func at(ptr string) string {
	ptr = cmp.Or(ptr, "/")
	return "at " + ptr + ": "
}

// escapePointer escapes a property name as a JSON pointer segment (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
