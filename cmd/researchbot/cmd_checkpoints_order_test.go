package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCheckpointsOrderReordersFields: `checkpoints order ID KEY...` puts the
// fields in the order given (words or a comma list) and show prints them
// so; a key unknown, repeated or left out is refused with the key named,
// and nothing is written.
func TestCheckpointsOrderReordersFields(t *testing.T) {
	c := newCPCLI(t)
	c.mustRun(riskDoc, "create", "-")
	keys := func() []string {
		t.Helper()
		var doc struct {
			Fields []struct {
				Key string `json:"key"`
			} `json:"field_schema"`
		}
		if err := json.Unmarshal([]byte(c.mustRun("", "show", "risk_check")), &doc); err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, f := range doc.Fields {
			ks = append(ks, f.Key)
		}
		return ks
	}
	out := c.mustRun("", "order", "risk_check", "notes", "level,score", "tags")
	if !strings.Contains(out, "risk_check: fields in order notes, level, score, tags") {
		t.Errorf("order: %q", out)
	}
	if got := keys(); !slices.Equal(got, []string{"notes", "level", "score", "tags"}) {
		t.Fatalf("after order: %v", got)
	}
	before := c.state("risk_check")
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"level", "notes", "score", "tags", "nope"}, `there is no field "nope"`},
		{[]string{"level", "level", "notes", "score", "tags"}, `field "level" is named twice`},
		{[]string{"level,notes"}, `missing: "score", "tags"`},
	} {
		_, msg, code := c.run("", append([]string{"order", "risk_check"}, bad.args...)...)
		if code != 1 || !strings.Contains(msg, bad.want) || !strings.Contains(msg, "Its fields now: notes, level, score, tags") {
			t.Errorf("order %v: exit %d %q, want 1 naming %q", bad.args, code, msg, bad.want)
		}
	}
	if after := c.state("risk_check"); after != before {
		t.Errorf("a refused order wrote something:\n%s\n---\n%s", before, after)
	}
	if _, msg, code := c.run("", "order", "risk_check"); code != 2 || !strings.Contains(msg, "Usage: researchbot checkpoints order ID KEY...") {
		t.Errorf("order without keys: exit %d %q, want usage (2)", code, msg)
	}
}
