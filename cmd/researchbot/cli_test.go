package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// runCLI runs the program in process and returns its exit code and output.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errb)
	return exitCode(err, io.Discard), out.String(), errb.String()
}

// TestHelpGoesToStdoutWithExit0: the program's help and every command's,
// however asked for, is printed on stdout with exit 0 and nothing on stderr.
func TestHelpGoesToStdoutWithExit0(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, stdout, stderr := runCLI(t, nil, args...)
		if code != 0 || !strings.Contains(stdout, "researchbot run [flags]") || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	for _, c := range commands {
		name := strings.Fields(c.name)
		for _, args := range [][]string{append([]string{"help"}, name...), append(append([]string(nil), name...), "-h"), append(append([]string(nil), name...), "--help")} {
			code, stdout, stderr := runCLI(t, nil, args...)
			if code != 0 || !strings.HasPrefix(stdout, "Usage: researchbot "+c.name) || stderr != "" {
				t.Errorf("%v: exit %d, stderr %q, stdout:\n%s", args, code, stderr, stdout)
			}
		}
	}
	// A command's help lists its flags.
	if _, stdout, _ := runCLI(t, nil, "help", "run"); !strings.Contains(stdout, "-mode string") || !strings.Contains(stdout, "-resume string") {
		t.Errorf("help run lists no flags:\n%s", stdout)
	}
}

// TestUsageErrorsGoToStderrWithExit2: a mistake on the command line is one
// line naming it and a pointer to the help, on stderr, exit 2.
func TestUsageErrorsGoToStderrWithExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "researchbot: unknown command \"frobnicate\" for \"researchbot\"\nRun 'researchbot help' for usage.\n"},
		{[]string{"runs", "--limit", "x"}, "researchbot runs: invalid value \"x\" for --limit: want a whole number, e.g. --limit 20\nRun 'researchbot help runs' for usage.\n"},
		{[]string{"runs", "--limit", "0"}, "researchbot runs: --limit must be at least 1 (got 0)\nRun 'researchbot help runs' for usage.\n"},
		{[]string{"run"}, "researchbot run: give a question, or --resume RUN_ID\nRun 'researchbot help run' for usage.\n"},
		{[]string{"run", "--mode"}, "researchbot run: --mode needs a value, e.g. --mode guided\nRun 'researchbot help run' for usage.\n"},
		{[]string{"serve", "now"}, "researchbot serve: takes no arguments (got \"now\")\nRun 'researchbot help serve' for usage.\n"},
		{[]string{"worker", "--bogus"}, "researchbot worker: unknown flag --bogus\nRun 'researchbot help worker' for usage.\n"},
		{[]string{"runs", "prune", "all"}, "researchbot runs prune: takes no arguments (got \"all\")\nRun 'researchbot help runs prune' for usage.\n"},
		{[]string{"env", "--all"}, "researchbot env: unknown flag --all\nRun 'researchbot help env' for usage.\n"},
		{[]string{"help", "nope"}, "researchbot help: there is no command \"nope\"\nRun 'researchbot help' for usage.\n"},
	} {
		code, stdout, stderr := runCLI(t, nil, tc.args...)
		if code != 2 || stdout != "" || stderr != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", tc.args, code, stdout, stderr, tc.want)
		}
	}
	// No command at all: the help, on stderr, exit 2.
	if code, stdout, stderr := runCLI(t, nil); code != 2 || stdout != "" || !strings.Contains(stderr, "Usage:") {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestEnvShowsCurrentValuesMaskedWithTheirSource: env prints every
// variable of the table with its value, secrets masked, and its source.
func TestEnvShowsCurrentValuesMaskedWithTheirSource(t *testing.T) {
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-1234-5678-secretpart", "OPENAI_API_KEY": "sk-verysecretkey",
		"LLM_MODEL": "gpt-4o", "REDIS_URL": "redis://:hunter2@redis:6379/0",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "https://team:otelsecret@collector:4318",
	}
	code, stdout, stderr := runCLI(t, env, "env")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"SLACK_BOT_TOKEN=xoxb-… (25 characters, masked)  (from the environment; default: none)\n",
		"OPENAI_API_KEY=sk-… (16 characters, masked)  (from the environment; default: none)\n",
		"LLM_MODEL=gpt-4o  (from the environment; default: gpt-4o-mini)\n",
		"REDIS_URL=redis://:xxxxx@redis:6379/0  (from the environment; default: embedded)\n",
		"LLM_TIMEOUT unset  (default: 120s)\n",
		"LLM_MODEL_WRITER unset  (default: LLM_MODEL)\n",
		"OTEL_EXPORTER_OTLP_ENDPOINT=https://team:xxxxx@collector:4318  (from the environment; default: none)\n",
		"OTEL_SERVICE_NAME unset  (default: researchbot)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("env does not print %q", want)
		}
	}
	for _, secret := range []string{"secretpart", "verysecretkey", "hunter2", "otelsecret"} {
		if strings.Contains(stdout, secret) {
			t.Errorf("env shows a secret (%s)", secret)
		}
	}
}
