package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/llm/llmtest"
)

const requestBody = `{
  "model": "gpt-4o-mini",
  "messages": [
    {"role": "system", "content": "sys one"},
    {"role": "system", "content": "sys two"},
    {"role": "user", "content": "first question"},
    {"role": "assistant", "content": "{}"},
    {"role": "user", "content": [{"type": "text", "text": "second "}, {"type": "text", "text": "question"}]}
  ],
  "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "strict": true,
    "schema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}}}
}`

func post(t *testing.T, url, body string) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body %q is not JSON: %v", raw, err)
	}
	return resp, m
}

func TestSuccessWireFormat(t *testing.T) {
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		r := llmtest.JSON(map[string]string{"a": "yes"})
		r.PromptTokens = 42
		return r
	})
	if !strings.HasSuffix(srv.URL(), "/v1") {
		t.Errorf("URL %q does not end in /v1", srv.URL())
	}
	resp, m := post(t, srv.URL(), requestBody)
	if resp.StatusCode != 200 || m["object"] != "chat.completion" || m["model"] != "gpt-4o-mini" {
		t.Fatalf("status %d body %v", resp.StatusCode, m)
	}
	if id, _ := m["id"].(string); !strings.HasPrefix(id, "chatcmpl-") {
		t.Errorf("id = %v", m["id"])
	}
	choice := m["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["content"] != `{"a":"yes"}` || msg["refusal"] != nil || choice["finish_reason"] != "stop" {
		t.Errorf("choice = %v", choice)
	}
	usage := m["usage"].(map[string]any)
	pt, ct, tt := usage["prompt_tokens"].(float64), usage["completion_tokens"].(float64), usage["total_tokens"].(float64)
	if pt != 42 || ct < 1 || tt != pt+ct {
		t.Errorf("usage = %v, want prompt 42, estimated completion, consistent total", usage)
	}

	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("calls = %d", len(calls))
	}
	c := calls[0]
	if c.Model != "gpt-4o-mini" || c.System != "sys one" || c.User != "second question" ||
		c.SchemaName != "answer" || !c.Strict || c.Messages != 5 {
		t.Errorf("call = %+v", c)
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Schema, &schema); err != nil || schema["additionalProperties"] != false {
		t.Errorf("schema = %s (%v)", c.Schema, err)
	}
}

func TestErrorWireFormat(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(
		llmtest.RateLimited("3"),
		llmtest.ContextLengthError(),
		llmtest.QuotaExceeded(),
		llmtest.Reply{Status: 503},
	))
	cases := []struct {
		status     int
		retryAfter string
		code       any
		typ        string
	}{
		{429, "3", "rate_limit_exceeded", "requests"},
		{400, "", "context_length_exceeded", "invalid_request_error"},
		{429, "", "insufficient_quota", "insufficient_quota"},
		{503, "", nil, "server_error"},
	}
	for i, want := range cases {
		resp, m := post(t, srv.URL(), requestBody)
		e, ok := m["error"].(map[string]any)
		if resp.StatusCode != want.status || !ok {
			t.Fatalf("%d: status %d body %v", i, resp.StatusCode, m)
		}
		if got := resp.Header.Get("Retry-After"); got != want.retryAfter {
			t.Errorf("%d: Retry-After = %q, want %q", i, got, want.retryAfter)
		}
		if e["code"] != want.code || e["type"] != want.typ || e["message"] == "" {
			t.Errorf("%d: error = %v", i, e)
		}
	}
	if n := len(srv.Calls()); n != 4 {
		t.Errorf("calls = %d, want 4 (errors are recorded too)", n)
	}
}

func TestRefusalWireFormat(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Refused("no") })
	_, m := post(t, srv.URL(), requestBody)
	msg := m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["refusal"] != "no" || msg["content"] != nil {
		t.Errorf("message = %v, want refusal and null content", msg)
	}
}

func TestRawErrorBody(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Status: 502, Content: "<html>bad gateway</html>"}
	})
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(requestBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 502 || string(body) != "<html>bad gateway</html>" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

func TestBadRequests(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(struct{}{}) })
	resp, m := post(t, srv.URL(), `{"messages": []}`)
	if resp.StatusCode != 400 || m["error"] == nil {
		t.Errorf("missing model: %d %v", resp.StatusCode, m)
	}
	resp, m = post(t, srv.URL(), `{not json`)
	if resp.StatusCode != 400 || m["error"] == nil {
		t.Errorf("bad JSON: %d %v", resp.StatusCode, m)
	}
	r, err := http.Get(srv.URL() + "/nothing-here")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("unknown path: %d, want 404", r.StatusCode)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("invalid requests recorded as calls: %d", n)
	}
}

func TestDelayHonoursClientCancel(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Delay: time.Minute, Content: "{}"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", bytes.NewBufferString(requestBody))
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request finished despite a one-minute delay")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v", el)
	}
	// Server.Close at cleanup must not wait out the delay; the test timing
	// out would show it.
}

func TestSequenceRepeatsLast(t *testing.T) {
	seq := llmtest.Sequence(llmtest.Reply{Content: "1"}, llmtest.Reply{Content: "2"})
	var got []string
	for range 4 {
		got = append(got, seq(llmtest.Call{}).Content)
	}
	if strings.Join(got, ",") != "1,2,2,2" {
		t.Errorf("sequence = %v", got)
	}
}

func TestJSONUnmarshalable(t *testing.T) {
	if r := llmtest.JSON(make(chan int)); r.Status != 500 {
		t.Errorf("JSON(chan) = %+v, want a 500 reply", r)
	}
}
