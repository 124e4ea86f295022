package streams

import (
	"strings"
	"testing"
)

// TestParseStreamDomains: the name before the options, both lists, --clear
// alone, and every misuse named. (That "/research stream domains …" is a
// stream command only with its options is bot's TestStreamDomainsIsAStreamCommand.)
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
}
