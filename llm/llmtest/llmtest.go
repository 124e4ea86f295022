// Package llmtest is a fake OpenAI-compatible chat completions server for
// tests. It speaks the real wire protocol of POST {base}/chat/completions
// (request JSON with model, messages and response_format; a chat.completion
// response with choices, refusal, finish_reason and usage; errors as
// {"error":{"message","type","code"}} with the matching HTTP status), so code
// under test uses its production client against it unchanged.
//
// A test supplies a Responder that decides each reply from the Call received,
// and afterwards inspects Server.Calls.
package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call is one chat completion request as the server received it.
type Call struct {
	Model      string
	SchemaName string // response_format.json_schema.name
	System     string // content of the first system (or developer) message
	User       string // content of the last user message
	// Schema is response_format.json_schema.schema exactly as sent.
	Schema json.RawMessage
	Strict bool // response_format.json_schema.strict
	// Messages is the number of messages; a repair attempt has more than the
	// first call.
	Messages int
}

// Reply is what the server answers to one Call.
type Reply struct {
	Status     int    // HTTP status; 0 means 200
	RetryAfter string // value of the Retry-After header, if set
	Content    string // message content of a 200 reply
	Refusal    string // message.refusal of a 200 reply
	// ErrorCode, ErrorType and ErrorMessage form the error body when Status >=
	// 400. If all three are empty and Content is set, Content is sent as the raw
	// body instead (a proxy's non-JSON error page).
	ErrorCode, ErrorType, ErrorMessage string
	// PromptTokens and CompletionTokens are reported in usage; 0 means an
	// estimate from the text length (about 4 characters per token).
	PromptTokens, CompletionTokens int
	// Delay is waited before answering; the wait ends early when the client
	// goes away.
	Delay time.Duration
	// FinishReason of a 200 reply; "" means "stop" ("length": cut off at the
	// token limit).
	FinishReason string
}

// Responder decides the reply to a call.
type Responder func(c Call) Reply

// Server is a running fake endpoint. It is closed when the test ends.
type Server struct {
	srv     *httptest.Server
	respond Responder

	mu    sync.Mutex
	calls []Call
	seq   int
}

// NewServer starts a fake OpenAI-compatible server answering with r. It is
// closed at the end of the test.
func NewServer(t testing.TB, r Responder) *Server {
	t.Helper()
	s := &Server{respond: r}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"gpt-4o-mini","object":"model","owned_by":"llmtest"}]}`))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		writeError(w, http.StatusNotFound, "", "invalid_request_error",
			fmt.Sprintf("Invalid URL (%s %s)", req.Method, req.URL.Path))
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL to configure the client with (OPENAI_BASE_URL); it ends
// in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Calls returns every call received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// wireRequest is the part of a chat completion request the fake reads.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// text returns a message's content: a string, or the text parts of an array.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func (s *Server) chatCompletions(w http.ResponseWriter, req *http.Request) {
	var wr wireRequest
	if err := json.NewDecoder(req.Body).Decode(&wr); err != nil {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	if wr.Model == "" {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "you must provide a model parameter")
		return
	}
	c := Call{Model: wr.Model, Messages: len(wr.Messages)}
	promptChars := 0
	systemSeen := false
	for _, m := range wr.Messages {
		t := text(m.Content)
		promptChars += len(t)
		switch m.Role {
		case "system", "developer":
			if !systemSeen {
				c.System, systemSeen = t, true
			}
		case "user":
			c.User = t
		}
	}
	if rf := wr.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		c.SchemaName = rf.JSONSchema.Name
		c.Schema = rf.JSONSchema.Schema
		c.Strict = rf.JSONSchema.Strict
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.seq++
	id := s.seq
	s.mu.Unlock()

	rep := Reply{Status: http.StatusInternalServerError, ErrorType: "server_error", ErrorMessage: "llmtest: no responder"}
	if s.respond != nil {
		rep = s.respond(c)
	}
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	status := rep.Status
	status = cmp.Or(status, http.StatusOK)
	if status >= 400 {
		if rep.ErrorCode == "" && rep.ErrorType == "" && rep.ErrorMessage == "" && rep.Content != "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(rep.Content))
			return
		}
		msg := rep.ErrorMessage
		if msg == "" {
			msg = http.StatusText(status)
		}
		typ := rep.ErrorType
		if typ == "" {
			typ = defaultErrorType(status)
		}
		writeError(w, status, rep.ErrorCode, typ, msg)
		return
	}

	pt, ct := rep.PromptTokens, rep.CompletionTokens
	if pt == 0 {
		pt = estimate(promptChars)
	}
	if ct == 0 {
		ct = estimate(len(rep.Content) + len(rep.Refusal))
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if rep.Refusal != "" {
		msg["refusal"] = rep.Refusal
	} else {
		msg["content"] = rep.Content
	}
	body := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest%06d", id),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   wr.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": cmp.Or(rep.FinishReason, "stop"),
		}},
		"usage": map[string]any{
			"prompt_tokens":     pt,
			"completion_tokens": ct,
			"total_tokens":      pt + ct,
		},
		"system_fingerprint": "fp_llmtest",
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func estimate(chars int) int { return chars/4 + 1 }

func defaultErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

func writeError(w http.ResponseWriter, status int, code, typ, msg string) {
	var c any
	if code != "" {
		c = code
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c},
	})
}

// JSON is a 200 reply whose message content is v marshalled to JSON. If v
// cannot be marshalled the reply is a 500 naming the problem.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		return Reply{Status: http.StatusInternalServerError, ErrorType: "server_error", ErrorMessage: "llmtest: JSON: " + err.Error()}
	}
	return Reply{Content: string(b)}
}

// ContextLengthError is the 400 OpenAI sends when the input is too long.
func ContextLengthError() Reply {
	return Reply{
		Status:       http.StatusBadRequest,
		ErrorCode:    "context_length_exceeded",
		ErrorType:    "invalid_request_error",
		ErrorMessage: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
	}
}

// RateLimited is a 429 with the given Retry-After header ("" for none).
func RateLimited(retryAfter string) Reply {
	return Reply{
		Status:       http.StatusTooManyRequests,
		RetryAfter:   retryAfter,
		ErrorCode:    "rate_limit_exceeded",
		ErrorType:    "requests",
		ErrorMessage: "Rate limit reached for requests. Please try again later.",
	}
}

// QuotaExceeded is the 429 OpenAI sends when the account is out of credit.
func QuotaExceeded() Reply {
	return Reply{
		Status:       http.StatusTooManyRequests,
		ErrorCode:    "insufficient_quota",
		ErrorType:    "insufficient_quota",
		ErrorMessage: "You exceeded your current quota, please check your plan and billing details.",
	}
}

// ServerError is a 500 from the provider.
func ServerError() Reply {
	return Reply{Status: http.StatusInternalServerError, ErrorType: "server_error",
		ErrorMessage: "The server had an error while processing your request. Sorry about that!"}
}

// Refused is a 200 whose message carries a refusal instead of content.
func Refused(msg string) Reply { return Reply{Refusal: msg} }

// Sequence answers the i-th call with replies[i], and every later call with
// the last reply. It is safe for concurrent use.
func Sequence(replies ...Reply) Responder {
	var mu sync.Mutex
	i := 0
	return func(Call) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return ServerError()
		}
		r := replies[min(i, len(replies)-1)]
		i++
		return r
	}
}
