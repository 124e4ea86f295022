package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/redistest"
)

// cpCLI runs `researchbot checkpoints …` against one real Redis.
type cpCLI struct {
	t   *testing.T
	env func(string) string
}

func newCPCLI(t *testing.T) *cpCLI {
	srv, _ := redistest.Start(t)
	return &cpCLI{t: t, env: func(k string) string { return map[string]string{"REDIS_URL": srv.URL}[k] }}
}

// run returns stdout, stderr's message and the exit code (0 on success).
func (c *cpCLI) run(stdin string, args ...string) (string, string, int) {
	c.t.Helper()
	return runCheckpoints(c.t, c.env, stdin, args...)
}

func runCheckpoints(t *testing.T, env func(string) string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"checkpoints"}, args...), env, strings.NewReader(stdin), &out, &errb)
	var exit *exitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.msg, exit.code
	default:
		return out.String(), err.Error(), 1
	}
}

// mustRun fails the test unless the command succeeds.
func (c *cpCLI) mustRun(stdin string, args ...string) string {
	c.t.Helper()
	out, msg, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("checkpoints %v: exit %d: %s", args, code, msg)
	}
	return out
}

// state is everything stored about definitions, to show nothing changed.
func (c *cpCLI) state(ids ...string) string {
	c.t.Helper()
	s := c.mustRun("")
	for _, id := range ids {
		out, _, _ := c.run("", "show", id)
		s += out
	}
	return s
}

const riskDoc = `{
  "control_type": "risk_check",
  "label": "Risk check",
  "description": "Rate the risks before searching.",
  "pipeline_position": "after_planning",
  "sort_order": 5,
  "applicable_modes": ["guided", "full"],
  "required": false,
  "timeout_seconds": 7200,
  "field_schema": [
    {"key": "level", "type": "select", "label": "Risk level", "required": true,
     "options": [{"value": "low", "label": "Low"}, {"value": "high", "label": "High"}]},
    {"key": "score", "type": "range", "label": "Score", "min": 1, "max": 5, "default": 3},
    {"key": "tags", "type": "chips", "label": "Tags", "placeholder": "add a tag"},
    {"key": "notes", "type": "textarea", "label": "Notes"}
  ]
}`

func TestCheckpointsFieldsListsTheNineTypes(t *testing.T) {
	out, _, code := runCheckpoints(t, func(string) string { return "" }, "", "fields")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, typ := range []string{"text", "textarea", "select", "multi_select", "checkbox", "radio", "number", "range", "chips"} {
		if !strings.Contains(out, "\n"+typ+"\n") {
			t.Errorf("fields does not describe %s:\n%s", typ, out)
		}
	}
	if !strings.Contains(out, "min/max: required: both ends of the scale") {
		t.Errorf("range's bounds are not explained:\n%s", out)
	}
	js, _, _ := runCheckpoints(t, func(string) string { return "" }, "", "fields", "--json")
	var specs []struct {
		Type    string `json:"type"`
		Options string `json:"options"`
	}
	if err := json.Unmarshal([]byte(js), &specs); err != nil || len(specs) != 9 || specs[2].Type != "select" || !strings.HasPrefix(specs[2].Options, "required") {
		t.Fatalf("fields --json: %v %+v", err, specs)
	}
	if _, _, code := runCheckpoints(t, func(string) string { return "" }, "", "fields", "--yaml"); code != 2 {
		t.Fatalf("fields --yaml: exit %d, want 2", code)
	}
}

func TestCheckpointsWriteCommandsNeedRedisURL(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "risk.json")
	if err := os.WriteFile(file, []byte(riskDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	noRedis := func(string) string { return "" }
	for _, args := range [][]string{
		{"create", file}, {"update", "plan_review", file}, {"delete", "risk_check"}, {"enable", "plan_review"},
		{"disable", "plan_review"}, {"timeout", "plan_review", "1h"}, {"reset", "plan_review"},
	} {
		_, msg, code := runCheckpoints(t, noRedis, riskDoc, args...)
		if code != 2 || !strings.Contains(msg, "checkpoints "+args[0]+" needs REDIS_URL") || !strings.Contains(msg, "vanish") {
			t.Errorf("%v without REDIS_URL: exit %d, %q", args, code, msg)
		}
	}
	// Reading needs no shared Redis: the built-ins are there.
	out, _, code := runCheckpoints(t, noRedis, "", "show", "plan_review")
	if code != 0 || !strings.Contains(out, `"pipeline_position": "after_planning"`) {
		t.Fatalf("show without REDIS_URL: exit %d\n%s", code, out)
	}
	out, msg, code := runCheckpoints(t, noRedis, riskDoc, "validate", "-")
	if code != 0 || !strings.Contains(out, "risk_check: valid (enabled, optional, at after_planning, sort order 5, modes guided,full, 4 fields)") {
		t.Fatalf("validate: exit %d %q %q", code, out, msg)
	}
}

func TestCheckpointsCreateShowUpdateDelete(t *testing.T) {
	c := newCPCLI(t)
	file := filepath.Join(t.TempDir(), "risk.json")
	if err := os.WriteFile(file, []byte(riskDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	out := c.mustRun("", "create", file)
	if !strings.Contains(out, "risk_check: created (enabled, optional, at after_planning, sort order 5, modes guided,full, 4 fields)") {
		t.Fatalf("create: %q", out)
	}
	if _, msg, code := c.run(riskDoc, "create", "-"); code != 1 || !strings.Contains(msg, "risk_check exists; nothing was written") {
		t.Fatalf("second create: exit %d %q", code, msg)
	}

	shown := c.mustRun("", "show", "risk_check")
	var doc map[string]any
	if err := json.Unmarshal([]byte(shown), &doc); err != nil {
		t.Fatalf("show is not JSON: %v\n%s", err, shown)
	}
	for k, want := range map[string]any{"id": "risk_check", "timeout_seconds": 7200.0, "max_retries": 2.0, "circuit_breaker_threshold": 5.0, "circuit_breaker_window_minutes": 60.0, "enabled": true} {
		if doc[k] != want {
			t.Errorf("show: %s = %v, want %v", k, doc[k], want)
		}
	}
	if fs := doc["field_schema"].([]any); len(fs) != 4 || fs[1].(map[string]any)["default"] != 3.0 {
		t.Errorf("show: field_schema %v", doc["field_schema"])
	}

	// What show prints, update takes back: the GitOps round trip.
	if _, msg, code := c.run(shown, "update", "risk_check", "-"); code != 0 {
		t.Fatalf("round trip: %s", msg)
	}
	c.mustRun("", "disable", "risk_check")
	edited := strings.Replace(riskDoc, `"label": "Risk check"`, `"label": "Risk review"`, 1)
	out = c.mustRun(edited, "update", "risk_check", "-")
	if !strings.Contains(out, "risk_check: updated (disabled,") {
		t.Fatalf("update without \"enabled\" must keep the definition disabled: %q", out)
	}
	if shown := c.mustRun("", "show", "risk_check"); !strings.Contains(shown, `"label": "Risk review"`) {
		t.Fatalf("update not stored:\n%s", shown)
	}
	if _, msg, code := c.run(strings.Replace(riskDoc, `"control_type"`, `"id": "other", "control_type"`, 1), "update", "risk_check", "-"); code != 1 || !strings.Contains(msg, `id: is "other", but this edits "risk_check"`) {
		t.Fatalf("update with another id: exit %d %q", code, msg)
	}
	if _, msg, code := c.run(riskDoc, "update", "nope", "-"); code != 2 || !strings.Contains(msg, `no checkpoint "nope" (there are: clarify, critical_issues, draft_review, plan_review, risk_check, source_review)`) {
		t.Fatalf("update of an unknown id: exit %d %q", code, msg)
	}

	c.mustRun("", "enable", "risk_check")
	out = c.mustRun("", "delete", "risk_check")
	if !strings.Contains(out, "risk_check: deleted (disabled;") {
		t.Fatalf("delete: %q", out)
	}
	if list := c.mustRun(""); !strings.Contains(list, "risk_check       false") {
		t.Fatalf("a deleted definition is kept, disabled:\n%s", list)
	}
	before := c.state("plan_review")
	if _, msg, code := c.run("", "delete", "plan_review"); code != 1 || !strings.Contains(msg, "plan_review is built in and cannot be deleted") {
		t.Fatalf("delete a built-in: exit %d %q", code, msg)
	}
	if after := c.state("plan_review"); after != before {
		t.Fatalf("refused delete changed something:\n%s\n%s", before, after)
	}
}

func TestCheckpointsBadDocumentsWriteNothing(t *testing.T) {
	c := newCPCLI(t)
	before := c.state("plan_review", "risk_check")
	cases := []struct {
		name, doc string
		args      []string
		want      []string
	}{
		{"invalid JSON", `{"control_type": "risk_check",` + "\n" + `"label": }`, []string{"create", "-"},
			[]string{"stdin: 1 problem, nothing was written:", "$: not valid JSON: invalid character '}' looking for beginning of value (line 2, column 10)"}},
		{"unknown field type", strings.Replace(riskDoc, `"type": "chips"`, `"type": "tagcloud"`, 1), []string{"create", "-"},
			[]string{`field_schema[2].type: unknown type "tagcloud" (one of text, textarea, select, multi_select, checkbox, radio, number, range, chips)`}},
		{"every problem at once", strings.NewReplacer(`"type": "chips"`, `"type": "tagcloud"`, `"sort_order": 5`, `"sort_order": "first"`, `"required": false`, `"required": false, "colour": "red"`).Replace(riskDoc),
			[]string{"create", "-"}, []string{"3 problems", "colour: unknown key", "sort_order: is string, must be a whole number", `field_schema[2].type: unknown type "tagcloud"`}},
		{"a built-in's id", strings.Replace(riskDoc, `"control_type": "risk_check"`, `"control_type": "plan_review"`, 1), []string{"create", "-"},
			[]string{`id: "plan_review" is a built-in's id; use update`}},
		{"built-in loses a field", `{"control_type": "plan_review", "label": "Plan", "pipeline_position": "after_planning", "field_schema": [{"key": "sub_questions", "type": "textarea", "label": "Q"}]}`,
			[]string{"update", "plan_review", "-"}, []string{`field_schema: a built-in keeps its field "queries"`}},
		{"no such file", "", []string{"create", filepath.Join(t.TempDir(), "missing.json")}, []string{"no such file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, msg, code := c.run(tc.doc, tc.args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1: %s", code, msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
		})
	}
	if after := c.state("plan_review", "risk_check"); after != before {
		t.Fatalf("a refused document changed the store:\n%s\n%s", before, after)
	}
}

func TestCheckpointsEnableDisableTimeoutReset(t *testing.T) {
	c := newCPCLI(t)
	if out := c.mustRun("", "timeout", "plan_review", "2h"); !strings.Contains(out, "plan_review: enabled true, timeout 2h0m0s") {
		t.Fatalf("timeout: %q", out)
	}
	if out := c.mustRun("", "disable", "plan_review"); !strings.Contains(out, "enabled false") {
		t.Fatalf("disable: %q", out)
	}
	if out := c.mustRun("", "enable", "plan_review"); !strings.Contains(out, "enabled true, timeout 2h0m0s") {
		t.Fatalf("enable: %q", out)
	}
	if _, msg, code := c.run("", "timeout", "plan_review", "soon"); code != 2 || !strings.Contains(msg, `"soon" is not a duration`) {
		t.Fatalf("bad duration: exit %d %q", code, msg)
	}
	if out := c.mustRun("", "reset", "plan_review"); !strings.Contains(out, "plan_review: breaker reset (it was closed; 0 recent failures forgotten)") {
		t.Fatalf("reset: %q", out)
	}
	if _, msg, code := c.run("", "frobnicate", "x"); code != 2 || !strings.Contains(msg, `unknown command "frobnicate" for "researchbot checkpoints"`) {
		t.Errorf("frobnicate: exit %d %q, want an unknown command (2)", code, msg)
	}
	for _, args := range [][]string{{"show"}, {"enable"}, {"reset", "plan_review", "now"}, {"create"}} {
		if _, msg, code := c.run("", args...); code != 2 || !strings.Contains(msg, "Usage:") {
			t.Errorf("%v: exit %d %q, want usage (2)", args, code, msg)
		}
	}
	if out, _, code := c.run("", "help"); code != 0 || !strings.Contains(out, "researchbot checkpoints reset ID") {
		t.Fatalf("help: exit %d", code)
	}
}

// TestCheckpointsPrintStoredTextCleaned: a definition stored before
// definitions were bounded (or written straight into Redis) with escape
// sequences and bidi controls in its text is listed and shown with none of
// them reaching the terminal.
func TestCheckpointsPrintStoredTextCleaned(t *testing.T) {
	srv, rdb := redistest.Start(t)
	env := func(k string) string { return map[string]string{"REDIS_URL": srv.URL}[k] }
	if _, msg, code := runCheckpoints(t, env, ""); code != 0 { // writes the built-ins
		t.Fatalf("list: exit %d: %s", code, msg)
	}
	raw := `{"id":"evil","control_type":"evil","label":"Evil\u001b[2J\u001b]0;pwned\u0007 \u202eelbat\u009b31m","description":"x\u0000y",` +
		`"fields":[{"key":"k","type":"select","label":"K\u001b[H","options":[{"value":"a","label":"A\u2066\u001b[5m"}]}],` +
		`"position":"after_planning","modes":["*"],"enabled":true}`
	if err := rdb.HSet(context.Background(), "rb:defs", "evil", raw).Err(); err != nil {
		t.Fatal(err)
	}
	list, msg, code := runCheckpoints(t, env, "")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, msg)
	}
	show, msg, code := runCheckpoints(t, env, "", "show", "evil")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, msg)
	}
	for name, out := range map[string]string{"list": list, "show": show} {
		if strings.ContainsAny(out, "\x1b\x00\x07\u009b\u202e\u2066") {
			t.Errorf("%s printed a control or bidi character: %q", name, out)
		}
	}
	if !strings.Contains(list, "Evil elbat31m\n") {
		t.Errorf("list lost the visible text of the label:\n%s", list)
	}
	if !strings.Contains(show, `"label": "A\u001b[5m"`) { // JSON escapes controls; the bidi isolate is gone
		t.Errorf("show lost the visible text of an option:\n%s", show)
	}
}

// TestCheckpointsCreateRefusesUnboundedDefinitions: what the fault suite
// once stored is refused with its problems listed, and nothing is written.
func TestCheckpointsCreateRefusesUnboundedDefinitions(t *testing.T) {
	c := newCPCLI(t)
	before := c.state()
	opts := make([]string, 10_000)
	for i := range opts {
		opts[i] = fmt.Sprintf(`{"value":"o%d"}`, i)
	}
	fields := make([]string, 1000)
	for i := range fields {
		fields[i] = fmt.Sprintf(`{"key":"f%d","type":"text","label":"F"}`, i)
	}
	doc := func(label, fields string) string {
		return `{"control_type":"huge","label":"` + label + `","pipeline_position":"after_planning","field_schema":[` + fields + `]}`
	}
	for _, c2 := range []struct{ doc, want string }{
		{doc(strings.Repeat("a", 1_000_000), ""), "label: label is 1000000 characters long (at most 150)"},
		{doc("Huge", `{"key":"k","type":"multi_select","label":"K","options":[`+strings.Join(opts, ",")+`]}`), "field_schema[0].options: options: 10000 options is too many (at most 100)"},
		{doc("Huge", strings.Join(fields, ",")), "field_schema: field_schema: 1000 fields is too many (at most 50)"},
		{doc(`Huge\u0000`, ""), "label: label holds the control character U+0000"},
		{doc(`Huge\u001b[2J`, ""), "label: label holds the control character U+001B"},
		{doc(`Huge\u001b]0;pwned\u0007`, ""), "label: label holds the control character U+001B"},
		{doc("Huge \u202eelbat", ""), "label: label holds the bidirectional control U+202E"},
	} {
		_, msg, code := c.run(c2.doc, "create", "-")
		if code != 1 || !strings.Contains(msg, "nothing was written") || !strings.Contains(msg, c2.want) {
			t.Errorf("exit %d, message %.500q; want exit 1 and %q", code, msg, c2.want)
		}
	}
	if after := c.state(); after != before {
		t.Errorf("definitions changed:\n%s", after)
	}
}

// TestCheckpointsListShowsReminderPolicies: the list's REMINDERS column and
// its --json give each definition's reminder policy (the default when it
// states none); a definition the policy never applies to (optional, or
// with no timeout) says why in the table.
func TestCheckpointsListShowsReminderPolicies(t *testing.T) {
	c := newCPCLI(t)
	chased := strings.NewReplacer(`"control_type": "risk_check"`, `"control_type": "sign_off"`, `"required": false`, `"required": true`,
		`"timeout_seconds": 7200,`, `"timeout_seconds": 3600, "reminders": {"count": 5, "backoff_factor": 3, "max_interval_seconds": 7200, "escalate": "requester"},`).Replace(riskDoc)
	c.mustRun(chased, "create", "-")
	c.mustRun(riskDoc, "create", "-")
	c.mustRun("", "timeout", "plan_review", "0")

	table := c.mustRun("")
	rowOf := func(id string) string {
		for l := range strings.Lines(table) {
			if strings.HasPrefix(l, id+" ") {
				return l
			}
		}
		t.Fatalf("no row %s:\n%s", id, table)
		return ""
	}
	header := strings.SplitN(table, "\n", 2)[0]
	col := strings.Index(header, "REMINDERS")
	for id, want := range map[string]string{
		"sign_off":     "5, ×3, max 2h, then the requester",
		"draft_review": "3, ×2, max 24h, then admins",
		"risk_check":   "none (optional: skipped at its deadline)",
		"plan_review":  "none (no timeout)",
	} {
		// The cells before REMINDERS are ASCII: byte and column offsets agree.
		if row := rowOf(id); col < 0 || len(row) <= col || !strings.HasPrefix(row[col:], want+"  ") {
			t.Errorf("%s: REMINDERS column (at %d) is not %q:\n%s", id, col, want, table)
		}
	}

	byID := map[string]definitionJSON{}
	for _, d := range decodeLines[definitionJSON](t, c.mustRun("", "--json")) {
		byID[d.ID] = d
	}
	for id, want := range map[string]remindersJSON{
		"sign_off":     {Count: 5, BackoffFactor: 3, MaxIntervalSeconds: 7200, Escalate: "requester"},
		"draft_review": {Count: 3, BackoffFactor: 2, MaxIntervalSeconds: 86400, Escalate: "admins"},
		"risk_check":   {Count: 3, BackoffFactor: 2, MaxIntervalSeconds: 86400, Escalate: "admins"},
	} {
		if got := byID[id].Reminders; got != want {
			t.Errorf("--json %s: reminders %+v, want %+v", id, got, want)
		}
	}
}
