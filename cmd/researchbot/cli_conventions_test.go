package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// runArgs runs the program in process with env and returns its exit code,
// stdout and everything it said on stderr (an exitError's message included).
func runArgs(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return code, out.String(), errb.String()
}

// TestTyposAreNamedWithASuggestion: a mistyped command or flag is named,
// with the closest right one, on stderr, exit 2.
func TestTyposAreNamedWithASuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rnus"}, `researchbot: unknown command "rnus" for "researchbot"; did you mean "runs"?` + "\nRun 'researchbot help' for usage.\n"},
		{[]string{"chekpoints"}, `did you mean "checkpoints"?`},
		{[]string{"checkpoints", "shwo"}, `researchbot: unknown command "shwo" for "researchbot checkpoints"; did you mean "show"?` + "\nRun 'researchbot help checkpoints' for usage.\n"},
		{[]string{"checkpoints", "disabel", "x"}, `did you mean "disable"?`},
		{[]string{"checkpoints", "--jsn"}, "unknown flag --jsn (the list takes --json)"},
		{[]string{"runs", "--limt", "3"}, "researchbot runs: unknown flag --limt; did you mean --limit?\n"},
		{[]string{"runs", "--jsno"}, "did you mean --json?"},
		{[]string{"help", "wokrer"}, `there is no command "wokrer"; did you mean "worker"?`},
		{[]string{"help", "runs", "prnue"}, `there is no command "runs prnue"; did you mean "runs prune"?`},
	} {
		code, stdout, stderr := runArgs(t, nil, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	// A word far from every command gets no suggestion.
	if _, _, stderr := runArgs(t, nil, "frobnicate"); strings.Contains(stderr, "did you mean") {
		t.Errorf("a suggestion for a word like no command: %s", stderr)
	}
}

// TestUsageErrorsSayWhatWasExpected: a bad value names the flag, the value
// and what the flag takes; a wrong number of arguments names the
// subcommand and shows its usage line.
func TestUsageErrorsSayWhatWasExpected(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "--limit", "x"}, `invalid value "x" for --limit: want a whole number, e.g. --limit 20`},
		{[]string{"runs", "--json=maybe"}, `invalid value "maybe" for --json: want true or false`},
		{[]string{"run", "--max-cost", "lots", "a question long enough"}, `invalid value "lots" for --max-cost: want a non-negative number of dollars, such as 0.50`},
		{[]string{"healthcheck", "--timeout", "soon"}, `invalid value "soon" for --timeout: want a duration such as 30s or 5m`},
		{[]string{"run", "--mode"}, "--mode needs a value, e.g. --mode guided"},
		{[]string{"run", "--only-domain", "example.org, bad_one", "--never-domain", "spam.example", "--never-domain", "Example.ORG", "How well do heat pumps work in cold climates?"}, "only domain \"bad_one\": not a domain name (character '_')"},
		{[]string{"run", "--only-domain", "example.org", "--never-domain", "Example.ORG", "How well do heat pumps work in cold climates?"}, `domain "example.org" is in both the only and the never list`},
		{[]string{"checkpoints", "skip", "r-1"}, "researchbot checkpoints skip: wrong arguments (got 1: [\"r-1\"])\nUsage: researchbot checkpoints skip RUN_ID CHECKPOINT_ID"},
		{[]string{"checkpoints", "validate"}, "researchbot checkpoints validate: wrong arguments (got no arguments)\nUsage: researchbot checkpoints validate FILE|-"},
		{[]string{"checkpoints", "fields", "--yaml"}, "researchbot checkpoints fields: wrong arguments"},
	} {
		code, stdout, stderr := runArgs(t, nil, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// TestEveryHelpExits0: help however asked for, at every level, is printed
// on stdout with exit 0.
func TestEveryHelpExits0(t *testing.T) {
	for _, args := range [][]string{
		{"checkpoints", "skip", "--help"}, {"checkpoints", "skip", "-h"}, {"checkpoints", "help"},
		{"checkpoints", "--help"}, {"checkpoints", "-h"}, {"help", "checkpoints"}, {"runs", "--help"},
		{"runs", "prune", "-h"}, {"help", "help"}, {"--help"},
	} {
		code, stdout, stderr := runArgs(t, nil, args...)
		if code != 0 || !strings.Contains(stdout, "Usage") || stderr != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", args, code, stderr, stdout)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	words := []string{"show", "skip", "reset", "enable", "disable"}
	for in, want := range map[string]string{"shwo": "show", "SHOW": "show", "rest": "reset", "skp": "skip", "enabel": "enable", "x": "", "delete": "", "": ""} {
		if got := didYouMean(in, words); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}

// decodeLines decodes every line of out as one T, refusing fields T does
// not declare, and fails the test on any line that does not parse.
func decodeLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var vs []T
	s := bufio.NewScanner(strings.NewReader(out))
	for s.Scan() {
		dec := json.NewDecoder(strings.NewReader(s.Text()))
		dec.DisallowUnknownFields()
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("line %q does not parse: %v", s.Text(), err)
		}
		vs = append(vs, v)
	}
	return vs
}

// TestJSONListings: runs, runs --feedback and checkpoints with --json write
// one JSON object a line, each line parses, and every field is documented
// in docs/terminal.md.
func TestJSONListings(t *testing.T) {
	srv, _ := redistest.Start(t)
	env := map[string]string{"REDIS_URL": srv.URL}
	ctx := context.Background()
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Engine.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	def := checkpoints.Builtins(now)[0]
	inst := checkpoints.NewInstance(def, "r-j1.cp", "r-j1", nil, def.Fields, nil, now)
	if err := inst.Offer(now, "engine"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*pipeline.Run{
		{ID: "r-j1", Question: "How well do heat pumps\x1b[2J work?", Mode: checkpoints.ModeGuided, Origin: pipeline.Origin{Kind: "slack", Queue: "runs"},
			Status: pipeline.StatusWaiting, Step: pipeline.StepPlan, Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID, CreatedAt: now, UpdatedAt: now},
		{ID: "r-j2", Question: "What do heat pumps cost?", Origin: pipeline.Origin{Kind: "terminal"}, Status: pipeline.StatusCompleted, Step: pipeline.StepDone,
			Verdicts: []pipeline.Verdict{{By: "U1", Useful: true, At: now}, {By: "U2", Useful: false, Reason: "no prices\u202e", At: now}, {By: "U1", Useful: false, On: "r-j2.f1", At: now}}, CreatedAt: now.Add(-time.Hour), UpdatedAt: now},
	} {
		if err := a.Store.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	code, stdout, stderr := runArgs(t, env, "runs", "--json")
	if code != 0 {
		t.Fatalf("runs --json: exit %d: %s", code, stderr)
	}
	runs := decodeLines[runJSON](t, stdout)
	byID := map[string]runJSON{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	if len(runs) != 2 || byID["r-j1"].WaitingAt != def.ID || byID["r-j1"].Status != "waiting" || byID["r-j1"].From != "slack" ||
		byID["r-j1"].Question != "How well do heat pumps work?" || !byID["r-j2"].CreatedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("runs --json:\n%s", stdout)
	}

	code, stdout, stderr = runArgs(t, env, "runs", "--feedback", "--json")
	if code != 0 {
		t.Fatalf("runs --feedback --json: exit %d: %s", code, stderr)
	}
	verdicts := decodeLines[verdictJSON](t, stdout)
	want := []verdictJSON{
		{RunID: "r-j2", Question: "What do heat pumps cost?", By: "U1", Verdict: "useful", At: now},
		{RunID: "r-j2", Question: "What do heat pumps cost?", By: "U2", Verdict: "not_useful", Reason: "no prices", At: now},
		{RunID: "r-j2", Question: "What do heat pumps cost?", On: "r-j2.f1", By: "U1", Verdict: "not_useful", At: now},
	}
	if !reflect.DeepEqual(verdicts, want) {
		t.Errorf("runs --feedback --json:\n%s", stdout)
	}

	code, stdout, stderr = runArgs(t, env, "checkpoints", "--json")
	if code != 0 {
		t.Fatalf("checkpoints --json: exit %d: %s", code, stderr)
	}
	defs := decodeLines[definitionJSON](t, stdout)
	if len(defs) < 3 || defs[0].ID == "" || defs[0].BreakerThreshold == 0 || len(defs[0].Modes) == 0 {
		t.Errorf("checkpoints --json:\n%s", stdout)
	}

	code, stdout, stderr = runArgs(t, env, "status", "--json", "r-j1")
	if st := decodeLines[runJSON](t, stdout); code != 0 || len(st) != 1 || !reflect.DeepEqual(st[0], byID["r-j1"]) {
		t.Errorf("status --json r-j1: exit %d %s\n%s", code, stderr, stdout)
	}
	code, stdout, _ = runArgs(t, env, "status", "r-j1")
	if code != 0 || !strings.Contains(stdout, "status    waiting at "+def.ID+"\n") || !strings.Contains(stdout, "question  How well do heat pumps work?") {
		t.Errorf("status r-j1: exit %d\n%s", code, stdout)
	}
	if code, _, stderr = runArgs(t, env, "status", "r-none"); code != 1 || !strings.Contains(stderr, `no run "r-none"`) {
		t.Errorf("status of no run: exit %d %s", code, stderr)
	}
	if code, _, stderr = runArgs(t, env, "status"); code != 2 || !strings.Contains(stderr, "needs one run id") {
		t.Errorf("status without a run: exit %d %s", code, stderr)
	}

	doc, err := os.ReadFile("../../docs/terminal.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{runJSON{}, verdictJSON{}, definitionJSON{}, sourceJSON{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("docs/terminal.md does not document the field %s of %s", name, rt.Name())
			}
		}
	}
}

// TestTablesAreAlignedByTabwriter: every row's columns start where the
// header's do, coloured or not; colour is only for a terminal, and never
// with NO_COLOR.
func TestTablesAreAlignedByTabwriter(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	runs := []*pipeline.Run{
		{ID: "r-1", Question: "short", Status: pipeline.StatusRunning, Step: pipeline.StepSearch, Origin: pipeline.Origin{Kind: "slack"}, CreatedAt: now},
		{ID: "r-22222222", Question: "longer", Status: pipeline.StatusCompleted, Step: pipeline.StepDone, Origin: pipeline.Origin{Kind: "terminal"}, CreatedAt: now.Add(-72 * time.Hour)},
		{ID: "r-3", Question: "failed", Status: pipeline.StatusFailed, Step: pipeline.StepPlan, Origin: pipeline.Origin{Kind: "stream"}, CreatedAt: now},
	}
	sgr := regexp.MustCompile("\x1b\\[[0-9;]*m")
	for _, color := range []bool{false, true} {
		out := formatRuns(runs, now, color)
		if got := strings.Contains(out, "\x1b["); got != color {
			t.Errorf("color %v: escape sequences %v:\n%q", color, got, out)
		}
		if color && !strings.Contains(out, sgrGreen+"completed"+sgrReset) || color && !strings.Contains(out, sgrRed+"failed"+sgrReset) {
			t.Errorf("statuses not coloured:\n%q", out)
		}
		lines := strings.Split(sgr.ReplaceAllString(out, ""), "\n")
		for _, head := range []string{"STATUS", "STEP", "QUESTION"} {
			col := strings.Index(lines[0], head)
			for _, l := range lines[1:] {
				if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
					t.Errorf("color %v: row not aligned under %s (column %d):\n%s", color, head, col, strings.Join(lines, "\n"))
				}
			}
		}
	}
	st := formatStatus(runJSON{ID: "r-1", Status: "failed", Step: "plan", CreatedAt: now}, now, true)
	if !strings.Contains(st, "status    "+sgrRed+"failed"+sgrReset+"\n") {
		t.Errorf("status not coloured:\n%q", st)
	}
	if st := formatStatus(runJSON{ID: "r-1", Status: "failed", Step: "plan", CreatedAt: now}, now, false); strings.Contains(st, "\x1b") {
		t.Errorf("colour without a terminal:\n%q", st)
	}
	var buf bytes.Buffer
	if colorOn(&buf, func(string) string { return "" }) {
		t.Error("colour on a buffer, which is no terminal")
	}
	if colorOn(os.Stdout, func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }) {
		t.Error("colour despite NO_COLOR")
	}
}

// TestCompletion: the scripts call `researchbot __complete`, which offers
// commands, subcommands and each command's own flags, filtered by what is
// typed so far.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "complete -o default -F _researchbot researchbot",
		"zsh":  "bashcompinit",
		"fish": "complete -c researchbot",
	} {
		code, stdout, stderr := runArgs(t, nil, "completion", shell)
		if code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "researchbot __complete") || stderr != "" {
			t.Errorf("completion %s: exit %d, stderr %q:\n%s", shell, code, stderr, stdout)
		}
	}
	if code, _, stderr := runArgs(t, nil, "completion", "bsh"); code != 2 || !strings.Contains(stderr, `did you mean "bash"?`) {
		t.Errorf("completion bsh: exit %d %s", code, stderr)
	}
	for _, tc := range []struct {
		words []string
		want  string
	}{
		{[]string{""}, "run\nruns\nstatus\nask\nserve\nworker\ncheckpoints\nenv\nsources\ndocs\neval\nhealthcheck\ncompletion\nversion\nhelp\n--version\n--help\n"},
		{[]string{"docs", "s"}, "status\nsearch\n"},
		{[]string{"eval", "--"}, "--corpus\n--depth\n--json\n--questions\n--help\n"},
		{[]string{"help", "docs", ""}, "index\nstatus\nsearch\n"},
		{[]string{"ch"}, "checkpoints\n"},
		{[]string{"checkpoints", "d"}, "delete\ndisable\n"},
		{[]string{"checkpoints", "-"}, "--json\n--help\n"},
		{[]string{"runs", "--"}, "--feedback\n--json\n--limit\n--help\n"},
		{[]string{"runs", "p"}, "prune\n"},
		{[]string{"run", "--m"}, "--max-cost\n--max-iterations\n--mode\n"},
		{[]string{"run", "--n"}, "--never-domain\n"},
		{[]string{"help", "ru"}, "run\nruns\n"},
		{[]string{"help", "runs", ""}, "prune\n"},
		{[]string{"completion", ""}, "bash\nzsh\nfish\n"},
		{[]string{"zzz"}, ""},
	} {
		code, stdout, stderr := runArgs(t, nil, append([]string{"__complete"}, tc.words...)...)
		if code != 0 || stdout != tc.want || stderr != "" {
			t.Errorf("__complete %q: exit %d, stderr %q, got\n%s\nwant\n%s", tc.words, code, stderr, stdout, tc.want)
		}
	}
}
