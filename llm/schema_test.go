package llm

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	invopop "github.com/invopop/jsonschema"
)

// ruleItem is referenced from ruleReply's lists, so it lands in $defs and
// is validated through a $ref.
type ruleItem struct {
	Name string `json:"name" jsonschema:"pattern=^[a-z]+$"`
	Kind string `json:"kind" jsonschema:"enum=news,enum=paper"`
}

// ruleVersion is a string with a const, set the only way invopop allows.
type ruleVersion string

// JSONSchemaExtend pins the value.
func (ruleVersion) JSONSchemaExtend(s *invopop.Schema) { s.Const = "v1" }

// ruleReply has a field for every rule class the validator enforces.
type ruleReply struct {
	Version ruleVersion `json:"version"`
	Score   int         `json:"score" jsonschema:"minimum=0,maximum=10"`
	Ratio   float64     `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1"`
	Items   []ruleItem  `json:"items" jsonschema:"minItems=1,maxItems=2"`
	Lead    *ruleItem   `json:"lead,omitempty"`
	Note    string      `json:"note,omitempty"`
	When    time.Time   `json:"when"`
}

const validRuleReply = `{"version": "v1", "score": 3, "ratio": 0.5, "items": [{"name": "go", "kind": "news"}], "lead": {"name": "x", "kind": "paper"}, "note": "n", "when": "2026-01-02T03:04:05Z"}`

// ruleCases each break one rule of ruleReply's schema in validRuleReply,
// replacing old with new; want is the JSON pointer the problem must be
// reported at.
var ruleCases = []struct {
	rule, old, new, want string
}{
	{"required", `"score": 3, `, ``, "/"},
	{"required in a $ref", `{"name": "go", "kind": "news"}`, `{"name": "go"}`, "/items/0"},
	{"type", `"score": 3`, `"score": "3"`, "/score"},
	{"type integer", `"score": 3`, `"score": 3.5`, "/score"},
	{"type in a $ref", `"name": "x"`, `"name": 7`, "/lead/name"},
	{"enum", `"kind": "news"`, `"kind": "blog"`, "/items/0/kind"},
	{"const", `"version": "v1"`, `"version": "v2"`, "/version"},
	{"minimum", `"score": 3`, `"score": -1`, "/score"},
	{"maximum", `"score": 3`, `"score": 11`, "/score"},
	{"exclusiveMinimum", `"ratio": 0.5`, `"ratio": 0`, "/ratio"},
	{"exclusiveMaximum", `"ratio": 0.5`, `"ratio": 1`, "/ratio"},
	{"pattern", `"name": "go"`, `"name": "Go!"`, "/items/0/name"},
	{"minItems", `"items": [{"name": "go", "kind": "news"}]`, `"items": []`, "/items"},
	{"maxItems", `"items": [{"name": "go", "kind": "news"}]`, `"items": [{"name": "a", "kind": "news"}, {"name": "b", "kind": "news"}, {"name": "c", "kind": "news"}]`, "/items"},
	{"additionalProperties", `"score": 3`, `"score": 3, "extra": true`, "/"},
	{"additionalProperties in a $ref", `"kind": "paper"}`, `"kind": "paper", "x": 1}`, "/lead"},
	{"anyOf with null: neither", `"lead": {"name": "x", "kind": "paper"}`, `"lead": "x"`, "/lead"},
	{"anyOf with null: inner rule", `"note": "n"`, `"note": 5`, "/note"},
	{"second item", `"items": [{"name": "go", "kind": "news"}]`, `"items": [{"name": "go", "kind": "news"}, {"name": "go", "kind": "nope"}]`, "/items/1/kind"},
}

// TestValidateRejectsEachRule fails if a reply breaking any one rule class
// of the lenient schema is accepted, or its problem is not reported at the
// right place in the "at <JSON pointer>: <message>" shape.
func TestValidateRejectsEachRule(t *testing.T) {
	s, err := buildSchema(reflect.TypeFor[ruleReply]())
	if err != nil {
		t.Fatal(err)
	}
	if p := s.validate(validRuleReply); len(p) != 0 {
		t.Fatalf("valid reply rejected: %q", p)
	}
	for _, omitted := range []string{`, "note": "n"`, `, "lead": {"name": "x", "kind": "paper"}`} {
		if p := s.validate(strings.Replace(validRuleReply, omitted, "", 1)); len(p) != 0 {
			t.Errorf("reply without optional %s rejected: %q", omitted, p)
		}
	}
	if p := s.validate(strings.Replace(validRuleReply, `"note": "n"`, `"note": null`, 1)); len(p) != 0 {
		t.Errorf("null optional field rejected: %q", p)
	}
	for _, tc := range ruleCases {
		reply := strings.Replace(validRuleReply, tc.old, tc.new, 1)
		if reply == validRuleReply {
			t.Fatalf("%s: %q not in the valid reply", tc.rule, tc.old)
		}
		p := s.validate(reply)
		t.Logf("%s: %q", tc.rule, p)
		if len(p) == 0 {
			t.Errorf("%s: reply accepted: %s", tc.rule, reply)
			continue
		}
		if !strings.HasPrefix(p[0], "at "+tc.want+": ") {
			t.Errorf("%s: problems %q, want the first at %s", tc.rule, p, tc.want)
		}
	}
}

// TestBadDateTimeRejected: a time.Time field's schema says format
// date-time; a reply whose value is not one is not stored, and the problem
// goes back to the model.
func TestBadDateTimeRejected(t *testing.T) {
	s, err := buildSchema(reflect.TypeFor[ruleReply]())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`"yesterday"`, `"2026-01-02"`, `"2026-01-02 03:04:05"`} {
		out := ruleReply{Note: "untouched"}
		reply := strings.Replace(validRuleReply, `"2026-01-02T03:04:05Z"`, bad, 1)
		p := decodeInto(reply, "stop", s, reflect.ValueOf(&out))
		t.Logf("%s: %q", bad, p)
		if len(p) == 0 || !strings.Contains(strings.Join(p, " "), bad[1:len(bad)-1]) {
			t.Errorf("when = %s: problems %q, want one naming the value", bad, p)
		}
		if out.Note != "untouched" {
			t.Errorf("when = %s: out written: %+v", bad, out)
		}
	}
}

// TestValidateReportsEveryProblem: a reply with several problems in
// different places gets one line for each, not only the first.
func TestValidateReportsEveryProblem(t *testing.T) {
	s, err := buildSchema(reflect.TypeFor[ruleReply]())
	if err != nil {
		t.Fatal(err)
	}
	reply := `{"version": "v1", "score": "3", "ratio": 0.5, "items": [{"name": "go", "kind": "news"}, {"name": "Go", "kind": "blog"}], "lead": {"kind": "paper"}, "extra": 1, "when": "2026-01-02T03:04:05Z"}`
	got := s.validate(reply)
	want := []string{"at /: ", "at /items/1/kind: ", "at /items/1/name: ", "at /lead: ", "at /score: "}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d: at %q", got, len(want), want)
	}
	for i, p := range got {
		if !strings.HasPrefix(p, want[i]) {
			t.Errorf("problem %d = %q, want it %s…", i, p, want[i])
		}
	}
}

// eitherReply has an anyOf that is not "X or null": locate checks it whole.
type eitherReply struct {
	Either any `json:"either" jsonschema:"oneof_type=string;integer"`
	Items  []struct {
		Either any `json:"either" jsonschema:"oneof_type=string;integer"`
	} `json:"items"`
}

// TestValidateOtherAnyOf: a value matching no alternative of an anyOf
// other than "X or null" is reported at its place.
func TestValidateOtherAnyOf(t *testing.T) {
	s, err := buildSchema(reflect.TypeFor[eitherReply]())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("schema %s", s.raw)
	if p := s.validate(`{"either": 1, "items": [{"either": "a"}]}`); len(p) != 0 {
		t.Errorf("valid reply rejected: %q", p)
	}
	p := s.validate(`{"either": true, "items": [{"either": "a"}, {"either": false}]}`)
	t.Logf("%q", p)
	if len(p) != 2 || !strings.HasPrefix(p[0], "at /either: anyOf") || !strings.HasPrefix(p[1], "at /items/1/either: anyOf") {
		t.Errorf("problems %q, want one at /either and one at /items/1/either", p)
	}
}

// TestValidateConcurrently: replies of one type are validated at once by
// many calls (the schema is cached per client), problems included; run
// with -race.
func TestValidateConcurrently(t *testing.T) {
	s, err := buildSchema(reflect.TypeFor[ruleReply]())
	if err != nil {
		t.Fatal(err)
	}
	reply := strings.Replace(validRuleReply, `"kind": "news"`, `"kind": "blog"`, 1)
	var wg sync.WaitGroup
	got := make([][]string, 8)
	for i := range got {
		wg.Go(func() { got[i] = s.validate(reply) })
	}
	wg.Wait()
	for i, p := range got {
		if len(p) != 1 || !strings.HasPrefix(p[0], "at /items/0/kind: ") {
			t.Errorf("call %d: problems %q", i, p)
		}
	}
}
