package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
)

// closedAddr returns a loopback address nothing listens on: connecting to
// it is refused at once.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// startFails runs the command in process and returns its exit error,
// failing the test unless it stopped with code 1 well within the checks'
// own time limit.
func startFails(t *testing.T, env map[string]string, args ...string) *exitError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &stdout, &stderr)
	took := time.Since(start)
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 1 {
		t.Fatalf("%v: err = %v, want exit 1; stderr:\n%s", args, err, stderr.String())
	}
	if took >= preflightTimeout {
		t.Errorf("%v took %v to fail: the checks waited for their time limit", args, took)
	}
	return exit
}

// problemLines returns the "  - …" lines of an exit message.
func problemLines(msg string) []string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if p, ok := strings.CutPrefix(l, "  - "); ok {
			out = append(out, p)
		}
	}
	return out
}

// TestServeStopsAtStartWithEveryProblem: wrong tokens (the fake Slack
// answers invalid_auth), Redis down and the model endpoint refusing
// connections are all reported at once, one line each, naming the
// variable, before serve takes any work.
func TestServeStopsAtStartWithEveryProblem(t *testing.T) {
	fake := slackfake.New(t)
	env := map[string]string{
		"SLACK_APP_TOKEN": "xapp-1-wrong", "SLACK_BOT_TOKEN": "xoxb-wrong", "SLACK_API_URL": fake.APIURL(),
		"REDIS_URL":       "redis://" + closedAddr(t) + "/0",
		"OPENAI_BASE_URL": "http://" + closedAddr(t) + "/v1", "OPENAI_API_KEY": "sk-test",
		"HTTP_ADDR": "127.0.0.1:0",
	}
	exit := startFails(t, env, "serve")
	lines := problemLines(exit.msg)
	want := []struct{ prefix, has string }{
		// sorted by variable
		{"OPENAI_BASE_URL: ", "could not be reached (connection refused)"},
		{"REDIS_URL: cannot reach Redis", "is it running?"},
		{"SLACK_APP_TOKEN: ", `"invalid_auth" to apps.connections.open`},
		{"SLACK_BOT_TOKEN: ", `"invalid_auth" to auth.test`},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d problem lines, want %d:\n%s", len(lines), len(want), exit.msg)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w.prefix) || !strings.Contains(lines[i], w.has) {
			t.Errorf("line %d = %q, want %q…%q", i, lines[i], w.prefix, w.has)
		}
	}
	if strings.Contains(exit.msg, "xoxb-wrong") || strings.Contains(exit.msg, "sk-test") {
		t.Errorf("a secret is in the message:\n%s", exit.msg)
	}
}

// TestServeStopsAtStartWhenAScopeIsMissing: an app installed from an older
// manifest lacks users:read, so bots.info answers missing_scope; serve
// stops before taking work, naming the scope and saying to reinstall.
func TestServeStopsAtStartWhenAScopeIsMissing(t *testing.T) {
	fake := slackfake.New(t)
	fake.FailMissingScope("bots.info", 1, "users:read", "commands,chat:write")
	srv, _ := redistest.Start(t)
	model := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(struct{}{}) })
	env := map[string]string{
		"SLACK_APP_TOKEN": fake.AppToken(), "SLACK_BOT_TOKEN": fake.BotToken(), "SLACK_API_URL": fake.APIURL(),
		"REDIS_URL": srv.URL, "OPENAI_BASE_URL": model.URL(), "OPENAI_API_KEY": "sk-test", "LLM_STARTUP_CHECK": "false",
		"HTTP_ADDR": "127.0.0.1:0",
	}
	exit := startFails(t, env, "serve")
	lines := problemLines(exit.msg)
	if len(lines) != 1 {
		t.Fatalf("problems:\n%s", exit.msg)
	}
	for _, want := range []string{"SLACK_BOT_TOKEN: ", `"missing_scope" to bots.info`, "lacks the users:read scope", "reinstall the app"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("problem %q lacks %q", lines[0], want)
		}
	}
	if n := len(fake.Calls("apps.connections.open")); n > 1 {
		t.Errorf("apps.connections.open called %d times: serve went on to connect", n)
	}
}

// TestWorkerStopsAtStartWhenTheModelRefusesTheKey: a worker checks the bot
// token and the model endpoint too; a rejected key names OPENAI_API_KEY, a
// base URL without /models OPENAI_BASE_URL.
// LLM_STARTUP_CHECK=false skips the model check.
func TestWorkerStopsAtStartWhenTheModelRefusesTheKey(t *testing.T) {
	fake := slackfake.New(t)
	srv, _ := redistest.Start(t)
	// OpenAI's answer to a wrong key.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`))
	}))
	defer refusing.Close()
	env := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-wrong", "SLACK_API_URL": fake.APIURL(), "REDIS_URL": srv.URL,
		"OPENAI_BASE_URL": refusing.URL + "/v1", "OPENAI_API_KEY": "sk-test",
	}
	exit := startFails(t, env, "worker")
	lines := problemLines(exit.msg)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "OPENAI_API_KEY: ") || !strings.Contains(lines[0], "HTTP 401") ||
		!strings.HasPrefix(lines[1], "SLACK_BOT_TOKEN: ") {
		t.Errorf("problems:\n%s", exit.msg)
	}
	// A base URL without the API's path: /models is not found.
	wrong := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(struct{}{}) })
	env["OPENAI_BASE_URL"] = wrong.URL() + "/chat"
	exit = startFails(t, env, "worker")
	if lines := problemLines(exit.msg); len(lines) != 2 || !strings.HasPrefix(lines[0], "OPENAI_BASE_URL: ") || !strings.Contains(lines[0], "HTTP 404") {
		t.Errorf("with a wrong base URL, problems:\n%s", exit.msg)
	}
	env["LLM_STARTUP_CHECK"] = "false"
	exit = startFails(t, env, "worker")
	if lines := problemLines(exit.msg); len(lines) != 1 || !strings.HasPrefix(lines[0], "SLACK_BOT_TOKEN: ") {
		t.Errorf("with LLM_STARTUP_CHECK=false, problems:\n%s", exit.msg)
	}
}

// TestRunStopsAtOnceWhenTheModelIsUnreachable: `run` with the endpoint at a
// closed port exits non-zero within seconds, the cause on stderr, instead
// of retrying for minutes.
func TestRunStopsAtOnceWhenTheModelIsUnreachable(t *testing.T) {
	env := map[string]string{"OPENAI_BASE_URL": "http://" + closedAddr(t) + "/v1"}
	exit := startFails(t, env, "run", "--mode", "auto", "How do heat pumps do in the cold?")
	if lines := problemLines(exit.msg); len(lines) != 1 || !strings.HasPrefix(lines[0], "OPENAI_BASE_URL: the model at http://127.0.0.1:") ||
		!strings.Contains(lines[0], "connection refused") || !strings.Contains(lines[0], "LLM_STARTUP_CHECK=false") {
		t.Errorf("message:\n%s", exit.msg)
	}
}
