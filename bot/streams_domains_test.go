package bot

import (
	"strings"
	"testing"
)

// TestParseStreamDomains: the name before the options, both lists, --clear
// alone, and every misuse named; "/research stream domains …" is a stream
// command only with its options.
func TestParseStreamDomains(t *testing.T) {
	cases := []struct {
		args, name, rules, problem string
		clear                      bool
	}{
		{args: "Heat Watch --only-domain example.org,example.net --never-domain spam.example", name: "Heat Watch", rules: "only example.org, example.net · never spam.example"},
		{args: "Heat Watch --clear", name: "Heat Watch", clear: true},
		{args: "Heat Watch --clear --never-domain a.example", problem: "give it alone"},
		{args: "Heat Watch --never-domain", problem: "needs a site"},
		{args: "Heat Watch --sometimes x", problem: "I don't know the option"},
		{args: "--never-domain a.example Heat Watch", problem: "name before the options"},
	}
	for _, c := range cases {
		name, rules, clearAll, problem := parseStreamDomains(c.args)
		if c.problem != "" {
			if !strings.Contains(problem, c.problem) {
				t.Errorf("%q: problem %q, want %q", c.args, problem, c.problem)
			}
			continue
		}
		if name != c.name || rules.String() != c.rules || clearAll != c.clear || problem != "" {
			t.Errorf("%q = %q, %q, %v, %q", c.args, name, rules, clearAll, problem)
		}
	}
	sub := func(text string) (Command, bool) { return subcommand(text, strings.Fields(text)) }
	if c, ok := sub("stream domains Heat Watch --never-domain a.example"); !ok || c.Kind != CmdStream {
		t.Errorf("stream domains with options is not a stream command: %+v", c)
	}
	if _, ok := sub("stream domains of heat pump makers"); ok {
		t.Error("a question starting \"stream domains\" became a stream command")
	}
}
