package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// jsonRecords parses every line of out as one JSON object, failing the
// test on any line that is not one.
func jsonRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for i, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("line %d is not JSON (%v): %s", i+1, err, line)
			continue
		}
		recs = append(recs, rec)
	}
	return recs
}

// TestServeWithJSONLogsWritesOnlyJSON: serve with LOG_FORMAT=json and
// LOG_LEVEL=debug, through a whole run and a SIGTERM, writes nothing but
// JSON lines; debug adds each step's start and end with its duration, and
// a summary of each LLM call without its text.
func TestServeWithJSONLogsWritesOnlyJSON(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	fake := slackfake.New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ana", "Europe/Oslo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := w.startWith(t, append(serveEnv(fake), "LOG_FORMAT=json", "LOG_LEVEL=debug"), "serve")
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	const question = "How well do heat pumps work in cold climates?"
	if _, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto " + question, UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if !fake.WaitUntil(60*time.Second, func() bool { fs := fake.Files(); return len(fs) > 0 && fs[0].Completed }) {
		t.Fatalf("no report was uploaded; stderr:\n%s", c.log())
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.wait(t); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, c.log())
	}
	recs := jsonRecords(t, c.log())
	count := map[string]int{}
	for _, r := range recs {
		msg, _ := r["msg"].(string)
		count[msg]++
		switch msg {
		case "step end":
			if _, ok := r["duration"]; !ok || r["step"] == nil {
				t.Errorf("step end without step or duration: %v", r)
			}
		case "llm call":
			for k := range r {
				if !slices.Contains([]string{"time", "level", "msg", "run", "role", "schema", "model", "duration", "prompt_tokens", "completion_tokens", "calls", "cost_usd", "ok"}, k) {
					t.Errorf("llm call record has %q: %v", k, r)
				}
			}
		}
	}
	for _, msg := range []string{"researchbot serving Slack", "step start", "step end", "llm call"} {
		if count[msg] == 0 {
			t.Errorf("no %q record; records by message: %v", msg, count)
		}
	}
	if strings.Contains(c.log(), "cold climates") {
		t.Errorf("the question's text is in the logs")
	}
}

// TestStartProblemsAreJSONWithJSONLogs: with LOG_FORMAT=json even the
// start-up problems are JSON records, one per problem, and nothing else is
// printed.
func TestStartProblemsAreJSONWithJSONLogs(t *testing.T) {
	fake := slackfake.New(t)
	env := map[string]string{
		"SLACK_APP_TOKEN": "xapp-1-wrong", "SLACK_BOT_TOKEN": "xoxb-wrong", "SLACK_API_URL": fake.APIURL(),
		"REDIS_URL": "redis://" + closedAddr(t) + "/0", "OPENAI_BASE_URL": "http://" + closedAddr(t) + "/v1",
		"HTTP_ADDR": "127.0.0.1:0", "LOG_FORMAT": "json",
	}
	for _, args := range [][]string{{"serve"}, {"worker"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(""), &stdout, &stderr)
		var exit *exitError
		if !errors.As(err, &exit) || exit.code != 1 || exit.msg != "" {
			t.Fatalf("%v: err = %#v, want exit 1 with nothing more to print", args, err)
		}
		var problems []string
		for _, r := range jsonRecords(t, stderr.String()) {
			if p, ok := r["problem"].(string); ok && r["level"] == "ERROR" {
				problems = append(problems, strings.SplitN(p, ":", 2)[0])
			}
		}
		want := []string{"OPENAI_BASE_URL", "REDIS_URL", "SLACK_APP_TOKEN", "SLACK_BOT_TOKEN"}
		if args[0] == "worker" {
			want = []string{"OPENAI_BASE_URL", "REDIS_URL", "SLACK_BOT_TOKEN"}
		}
		if !slices.Equal(problems, want) {
			t.Errorf("%v: problems %v, want %v\n%s", args, problems, want, stderr.String())
		}
	}
	// A configuration problem, before any logger is configured, too.
	env["LLM_TIMEOUT"] = "soon"
	var stdout, stderr bytes.Buffer
	_ = run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, strings.NewReader(""), &stdout, &stderr)
	if recs := jsonRecords(t, stderr.String()); len(recs) != 1 || !strings.HasPrefix(recs[0]["problem"].(string), "LLM_TIMEOUT") {
		t.Errorf("configuration problem:\n%s", stderr.String())
	}
}
