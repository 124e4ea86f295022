package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/llm/llmtest"
)

type source struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

type analysis struct {
	Summary    string   `json:"summary" jsonschema:"description=One paragraph summary"`
	Points     []string `json:"points"`
	Sources    []source `json:"sources"`
	Confidence float64  `json:"confidence"`
	Lead       *source  `json:"lead,omitempty"`
	Note       string   `json:"note,omitempty"`
}

func validAnalysis() analysis {
	return analysis{
		Summary:    "Go is fine.",
		Points:     []string{"a", "b"},
		Sources:    []source{{URL: "https://go.dev", Title: "Go"}},
		Confidence: 0.8,
		Lead:       &source{URL: "https://go.dev/doc", Title: "Docs"},
		Note:       "n",
	}
}

// sleeper is the client's clock: a quartz mock whose retry waits it
// records and ends at once, advancing the clock by each one.
type sleeper struct {
	*quartz.Mock
	mu     sync.Mutex
	delays []time.Duration
}

// newSleeper returns a sleeper serving the retry timers until the test ends.
func newSleeper(t *testing.T) *sleeper {
	s := &sleeper{Mock: quartz.NewMock(t)}
	trap := s.Trap().NewTimer("llm", "retry")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
		trap.Close()
	})
	go func() {
		defer close(done)
		for {
			call, err := trap.Wait(ctx)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.delays = append(s.delays, call.Duration)
			s.mu.Unlock()
			if call.Release(ctx) != nil {
				return
			}
			if s.Advance(call.Duration).Wait(ctx) != nil {
				return
			}
		}
	}()
	return s
}

func (s *sleeper) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

const testKey = "sk-test-SuperSecretKey1234567890"

func newClient(t *testing.T, srv *llmtest.Server, mod func(*llm.Config)) (*llm.Client, *sleeper) {
	t.Helper()
	sl := newSleeper(t)
	cfg := llm.Config{BaseURL: srv.URL(), APIKey: testKey, Clock: sl, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, sl
}

func request() llm.Request {
	return llm.Request{Model: "gpt-4o-mini", System: "You analyse.", User: "Analyse Go.", SchemaName: "analysis"}
}

// checkStrict walks a schema and asserts the OpenAI strict rules on every
// object: additionalProperties false and every property required.
func checkStrict(t *testing.T, path string, node any) {
	t.Helper()
	switch n := node.(type) {
	case map[string]any:
		for _, bad := range []string{"$schema", "$id", "minLength", "maxLength", "patternProperties", "oneOf", "allOf", "title", "default"} {
			if _, ok := n[bad]; ok {
				t.Errorf("%s: unsupported keyword %q present", path, bad)
			}
		}
		if props, ok := n["properties"].(map[string]any); ok || n["type"] == "object" {
			if n["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties = %v, want false", path, n["additionalProperties"])
			}
			req, _ := n["required"].([]any)
			if len(req) != len(props) {
				t.Errorf("%s: required %v does not list all %d properties", path, req, len(props))
			}
			for _, r := range req {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s: required names unknown property %v", path, r)
				}
			}
		}
		for k, v := range n {
			if k == "properties" || k == "$defs" {
				for name, sub := range v.(map[string]any) {
					checkStrict(t, path+"."+k+"."+name, sub)
				}
				continue
			}
			checkStrict(t, path+"."+k, v)
		}
	case []any:
		for _, v := range n {
			checkStrict(t, path+"[]", v)
		}
	}
}

func TestStrictSchema(t *testing.T) {
	raw, err := llm.StrictSchema(&analysis{})
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s["type"] != "object" {
		t.Fatalf("root type = %v, want object (root must not be a $ref): %s", s["type"], raw)
	}
	checkStrict(t, "$", s)
	props := s["properties"].(map[string]any)
	want := []string{"summary", "points", "sources", "confidence", "lead", "note"}
	if len(props) != len(want) {
		t.Fatalf("properties = %v, want %v", props, want)
	}
	// Property order follows the struct (the model generates in that order).
	last := -1
	for _, name := range want {
		i := bytes.Index(raw, []byte(`"`+name+`":`))
		if i < last {
			t.Errorf("property %q out of struct order in %s", name, raw)
		}
		last = i
	}
	if got := props["summary"].(map[string]any)["description"]; got != "One paragraph summary" {
		t.Errorf("summary description = %v", got)
	}
	if got := props["points"].(map[string]any); got["type"] != "array" || got["items"].(map[string]any)["type"] != "string" {
		t.Errorf("points = %v, want array of string", got)
	}
	// The omitempty fields are required but nullable.
	for _, name := range []string{"note", "lead"} {
		p := props[name].(map[string]any)
		anyOf, _ := p["anyOf"].([]any)
		if len(anyOf) != 2 || anyOf[1].(map[string]any)["type"] != "null" {
			t.Errorf("%s = %v, want anyOf [..., null]", name, p)
		}
	}
	// Nested structs are checked too (via $defs).
	defs, _ := s["$defs"].(map[string]any)
	if len(defs) == 0 {
		t.Fatalf("no $defs for nested struct: %s", raw)
	}
	for name, d := range defs {
		dm := d.(map[string]any)
		if dm["additionalProperties"] != false || len(dm["required"].([]any)) != 2 {
			t.Errorf("$defs.%s = %v, want strict object with 2 required", name, dm)
		}
	}
}

func TestStrictSchemaRejectsUnrepresentable(t *testing.T) {
	type withMap struct {
		M map[string]int `json:"m"`
	}
	type withAny struct {
		A any `json:"a"`
	}
	for name, v := range map[string]any{"map": &withMap{}, "any": &withAny{}, "notStruct": new(int)} {
		if _, err := llm.StrictSchema(v); err == nil {
			t.Errorf("%s: StrictSchema succeeded, want error", name)
		}
	}
}

func TestGenerateSuccess(t *testing.T) {
	want := validAnalysis()
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		r := llmtest.JSON(want)
		r.PromptTokens, r.CompletionTokens = 1000, 500
		return r
	})
	c, sl := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("out = %+v, want %+v", got, want)
	}
	wantCost := 1000*0.15/1e6 + 500*0.60/1e6
	if u.Model != "gpt-4o-mini" || u.PromptTokens != 1000 || u.CompletionTokens != 500 || u.Calls != 1 || u.UnknownPrice {
		t.Errorf("usage = %+v", u)
	}
	if math.Abs(u.CostUSD-wantCost) > 1e-12 {
		t.Errorf("cost = %v, want %v", u.CostUSD, wantCost)
	}
	if len(sl.Delays()) != 0 {
		t.Errorf("slept %v on success", sl.Delays())
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("calls = %d, want 1", len(calls))
	}
	call := calls[0]
	if call.Model != "gpt-4o-mini" || call.SchemaName != "analysis" || !call.Strict ||
		call.System != "You analyse." || call.User != "Analyse Go." || call.Messages != 2 {
		t.Errorf("call = %+v", call)
	}
	schema, _ := llm.StrictSchema(&analysis{})
	if !jsonEqual(t, call.Schema, schema) {
		t.Errorf("schema sent = %s, want %s", call.Schema, schema)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func TestDefaultSchemaNameAndNoSystem(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(validAnalysis()) })
	c, _ := newClient(t, srv, nil)
	var got analysis
	if _, err := c.Generate(context.Background(), llm.Request{Model: "gpt-4o", User: "u"}, &got); err != nil {
		t.Fatal(err)
	}
	call := srv.Calls()[0]
	if call.SchemaName != "analysis" || call.Messages != 1 || call.System != "" {
		t.Errorf("call = %+v, want schema name from type and no system message", call)
	}
}

func TestBadArguments(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(validAnalysis()) })
	c, _ := newClient(t, srv, nil)
	var got analysis
	cases := map[string]struct {
		req llm.Request
		out any
	}{
		"non-pointer": {request(), got},
		"nil":         {request(), nil},
		"no model":    {llm.Request{User: "u"}, &got},
		"bad name":    {llm.Request{Model: "m", SchemaName: "has space"}, &got},
	}
	for name, tc := range cases {
		if _, err := c.Generate(context.Background(), tc.req, tc.out); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("server got %d calls for invalid arguments", n)
	}
}

func TestRetryAfterSecondsHonoured(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimited("7"), llmtest.JSON(validAnalysis())))
	c, sl := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if d := sl.Delays(); len(d) != 1 || d[0] != 7*time.Second {
		t.Errorf("sleeps = %v, want [7s]", d)
	}
	if u.Calls != 2 || len(srv.Calls()) != 2 {
		t.Errorf("usage.Calls = %d, server calls = %d, want 2", u.Calls, len(srv.Calls()))
	}
	if got.Summary != "Go is fine." {
		t.Errorf("out = %+v", got)
	}
}

func TestRetryAfterHTTPDateHonoured(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	date := now.Add(30 * time.Second).Format(http.TimeFormat)
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.RateLimited(date), llmtest.JSON(validAnalysis())))
	c, sl := newClient(t, srv, nil)
	sl.Set(now)
	var got analysis
	if _, err := c.Generate(context.Background(), request(), &got); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if d := sl.Delays(); len(d) != 1 || d[0] != 30*time.Second {
		t.Errorf("sleeps = %v, want [30s]", d)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.ServerError(), llmtest.JSON(validAnalysis())))
	c, sl := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	d := sl.Delays()
	if len(d) != 1 || d[0] <= 0 || d[0] > 2*time.Second {
		t.Errorf("sleeps = %v, want one backoff of about 1s", d)
	}
	if u.Calls != 2 {
		t.Errorf("calls = %d, want 2", u.Calls)
	}
}

func TestNonJSONErrorPageRetried(t *testing.T) {
	page := llmtest.Reply{Status: http.StatusBadGateway, Content: "<html>502 Bad Gateway</html>"}
	srv := llmtest.NewServer(t, llmtest.Sequence(page, llmtest.JSON(validAnalysis())))
	c, _ := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err != nil || u.Calls != 2 {
		t.Fatalf("Generate: err=%v calls=%d, want success after 2 calls", err, u.Calls)
	}
}

func TestRetriesExhausted(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.ServerError() })
	c, sl := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxRetries = 3 })
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("err = %v, want *APIError 500", err)
	}
	if u.Calls != 4 || len(srv.Calls()) != 4 {
		t.Errorf("calls = %d (server %d), want 4", u.Calls, len(srv.Calls()))
	}
	d := sl.Delays()
	if len(d) != 3 {
		t.Fatalf("sleeps = %v, want 3", d)
	}
	// Exponential (×1.5 from 1s) with ±50% jitter.
	for i, base := range []float64{1, 1.5, 2.25} {
		lo, hi := time.Duration(base*0.5*float64(time.Second)), time.Duration(base*1.5*float64(time.Second))
		if d[i] < lo || d[i] > hi {
			t.Errorf("sleep %d = %v, want within [%v, %v]", i, d[i], lo, hi)
		}
	}
}

func TestDefaultMaxRetriesIsFour(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.RateLimited("") })
	c, _ := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err == nil || u.Calls != 5 {
		t.Errorf("err = %v, calls = %d, want error after 5 calls", err, u.Calls)
	}
}

func TestMalformedJSONRepaired(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(
		llmtest.Reply{Content: `{"summary": "cut off`, PromptTokens: 100, CompletionTokens: 10},
		llmtest.Reply{Content: mustJSON(t, validAnalysis()), PromptTokens: 150, CompletionTokens: 50},
	))
	c, _ := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if !reflect.DeepEqual(got, validAnalysis()) {
		t.Errorf("out = %+v", got)
	}
	calls := srv.Calls()
	if len(calls) != 2 || u.Calls != 2 {
		t.Fatalf("calls = %d (usage %d), want 2", len(calls), u.Calls)
	}
	if calls[1].Messages <= calls[0].Messages {
		t.Errorf("repair has %d messages, first call %d: want more", calls[1].Messages, calls[0].Messages)
	}
	if !strings.Contains(calls[1].User, "not valid JSON") || calls[1].System != "You analyse." {
		t.Errorf("repair call = %+v", calls[1])
	}
	if u.PromptTokens != 250 || u.CompletionTokens != 60 {
		t.Errorf("usage = %+v, want tokens of both calls", u)
	}
}

func TestInvalidTwice(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Reply{Content: "not json"}, llmtest.Reply{Content: "still not json"}))
	c, _ := newClient(t, srv, nil)
	got := analysis{Summary: "untouched"}
	u, err := c.Generate(context.Background(), request(), &got)
	var inv *llm.InvalidOutputError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v, want *InvalidOutputError", err)
	}
	if inv.Raw != "still not json" || len(inv.Problems) == 0 {
		t.Errorf("InvalidOutputError = %+v", inv)
	}
	if u.Calls != 2 || len(srv.Calls()) != 2 {
		t.Errorf("calls = %d, want exactly 2 (one repair)", u.Calls)
	}
	if u.CompletionTokens == 0 {
		t.Errorf("usage lost on error: %+v", u)
	}
	if got.Summary != "untouched" {
		t.Errorf("out written on failure: %+v", got)
	}
}

func TestSchemaInvalidRepaired(t *testing.T) {
	bad := `{"summary": 5, "points": [], "sources": [], "confidence": 1, "lead": null, "note": null, "extra": true}`
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.Reply{Content: bad}, llmtest.JSON(validAnalysis())))
	c, _ := newClient(t, srv, nil)
	var got analysis
	if _, err := c.Generate(context.Background(), request(), &got); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("calls = %d, want 2", len(calls))
	}
	if !strings.Contains(calls[1].User, "/summary") || !strings.Contains(calls[1].User, "extra") {
		t.Errorf("repair prompt does not name the problems: %q", calls[1].User)
	}
	if got.Summary != "Go is fine." {
		t.Errorf("out = %+v", got)
	}
}

func TestSchemaInvalidTwiceListsProblems(t *testing.T) {
	bad := `{"summary": "s", "points": "x", "sources": [], "confidence": 1, "lead": null, "note": null}`
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: bad} })
	c, _ := newClient(t, srv, nil)
	var got analysis
	_, err := c.Generate(context.Background(), request(), &got)
	var inv *llm.InvalidOutputError
	if !errors.As(err, &inv) || !strings.Contains(strings.Join(inv.Problems, " "), "/points") {
		t.Fatalf("err = %v, want InvalidOutputError naming /points", err)
	}
}

func TestNullableOptionalFieldAccepted(t *testing.T) {
	ok := `{"summary": "s", "points": [], "sources": [], "confidence": 1, "lead": null, "note": null}`
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: ok} })
	c, _ := newClient(t, srv, nil)
	var got analysis
	if _, err := c.Generate(context.Background(), request(), &got); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got.Note != "" || got.Summary != "s" || len(srv.Calls()) != 1 {
		t.Errorf("out = %+v, calls = %d", got, len(srv.Calls()))
	}
}

func TestContextLength(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"openai": llmtest.ContextLengthError(),
		"vllm": {Status: 400, ErrorType: "BadRequestError",
			ErrorMessage: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."},
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return reply })
			c, sl := newClient(t, srv, nil)
			var got analysis
			u, err := c.Generate(context.Background(), request(), &got)
			if !errors.Is(err, llm.ErrContextLength) {
				t.Fatalf("err = %v, want ErrContextLength", err)
			}
			var apiErr *llm.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 {
				t.Errorf("err = %#v, want *APIError with status 400", err)
			}
			if u.Calls != 1 || len(srv.Calls()) != 1 || len(sl.Delays()) != 0 {
				t.Errorf("calls = %d, sleeps = %v, want 1 call, no retry", u.Calls, sl.Delays())
			}
		})
	}
}

func TestQuotaNotRetried(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.QuotaExceeded() })
	c, _ := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if !errors.Is(err, llm.ErrQuota) {
		t.Fatalf("err = %v, want ErrQuota", err)
	}
	if errors.Is(err, llm.ErrContextLength) {
		t.Errorf("quota error also matches ErrContextLength")
	}
	if u.Calls != 1 || len(srv.Calls()) != 1 {
		t.Errorf("calls = %d, want 1", u.Calls)
	}
}

func TestClientErrorsNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404} {
		srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
			return llmtest.Reply{Status: status, ErrorCode: "some_code", ErrorMessage: "nope"}
		})
		c, _ := newClient(t, srv, nil)
		var got analysis
		u, err := c.Generate(context.Background(), request(), &got)
		var apiErr *llm.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Code != "some_code" || apiErr.Message != "nope" {
			t.Errorf("%d: err = %#v", status, err)
		}
		if u.Calls != 1 || len(srv.Calls()) != 1 {
			t.Errorf("%d: calls = %d, want 1", status, u.Calls)
		}
	}
}

func TestRefusal(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.Refused("I can't help with that.") })
	c, _ := newClient(t, srv, nil)
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	var ref *llm.RefusalError
	if !errors.As(err, &ref) || ref.Message != "I can't help with that." {
		t.Fatalf("err = %v, want *RefusalError", err)
	}
	if u.Calls != 1 || len(srv.Calls()) != 1 || u.CompletionTokens == 0 {
		t.Errorf("usage = %+v, want 1 call with tokens counted", u)
	}
	if !reflect.DeepEqual(got, analysis{}) {
		t.Errorf("refusal parsed into out: %+v", got)
	}
}

func TestPerCallTimeoutRetriedThenError(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Delay: 5 * time.Second, Content: "{}"}
	})
	c, sl := newClient(t, srv, func(cfg *llm.Config) {
		cfg.Timeout = 100 * time.Millisecond
		cfg.MaxRetries = 2
	})
	var got analysis
	start := time.Now()
	u, err := c.Generate(context.Background(), request(), &got)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if u.Calls != 3 || len(srv.Calls()) != 3 || len(sl.Delays()) != 2 {
		t.Errorf("calls = %d (server %d), sleeps %v: want 3 calls, 2 sleeps", u.Calls, len(srv.Calls()), sl.Delays())
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v: per-call timeout not applied", el)
	}
}

func TestCallerContextCancelStopsRetrying(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.RateLimited("60") })
	c, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: testKey}) // real sleep
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var got analysis
	start := time.Now()
	_, err = c.Generate(ctx, request(), &got)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context deadline", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("took %v: Retry-After sleep ignored the context", el)
	}
	if len(srv.Calls()) != 1 {
		t.Errorf("calls = %d, want 1", len(srv.Calls()))
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	leaky := []llmtest.Reply{
		{Status: 401, ErrorCode: "invalid_api_key", ErrorType: "invalid_request_error",
			ErrorMessage: "Incorrect API key provided: " + testKey + ". You can find your API key at https://platform.openai.com/account/api-keys."},
		{Status: 401, ErrorCode: "invalid_api_key", ErrorMessage: "Incorrect API key provided: sk-test-********************7890."},
		{Status: 502, Content: "<html>bad gateway for key " + testKey + "</html>"},
		{Status: 400, ErrorMessage: "maximum context length exceeded for " + testKey},
	}
	for i, rep := range leaky {
		srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return rep })
		c, _ := newClient(t, srv, func(cfg *llm.Config) { cfg.MaxRetries = -1 })
		var got analysis
		_, err := c.Generate(context.Background(), request(), &got)
		if err == nil {
			t.Fatalf("%d: no error", i)
		}
		if msg := err.Error(); strings.Contains(msg, "SuperSecret") || strings.Contains(msg, "sk-test-") {
			t.Errorf("%d: error leaks the key: %s", i, msg)
		}
	}
	// Connection errors too.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	sl := newSleeper(t)
	c, err := llm.New(llm.Config{BaseURL: "http://" + addr + "/v1", APIKey: testKey, Clock: sl, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err == nil || strings.Contains(err.Error(), "SuperSecret") {
		t.Errorf("connection error = %v", err)
	}
	if u.Calls != 2 || len(sl.Delays()) != 1 {
		t.Errorf("connection error: calls = %d, sleeps = %v, want retried once", u.Calls, sl.Delays())
	}
}

func TestPricing(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		r := llmtest.JSON(validAnalysis())
		r.PromptTokens, r.CompletionTokens = 2_000_000, 1_000_000
		return r
	})
	c, _ := newClient(t, srv, nil)
	cases := []struct {
		model   string
		cost    float64
		unknown bool
	}{
		{"gpt-4o", 2*2.50 + 10.00, false},
		{"gpt-4o-mini-2024-07-18", 2*0.15 + 0.60, false}, // dated snapshot, not gpt-4o
		{"gpt-4.1-nano", 2*0.10 + 0.40, false},
		{"llama3.1:8b", 0, true},
	}
	for _, tc := range cases {
		req := request()
		req.Model = tc.model
		var got analysis
		u, err := c.Generate(context.Background(), req, &got)
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		if math.Abs(u.CostUSD-tc.cost) > 1e-9 || u.UnknownPrice != tc.unknown || u.Model != tc.model {
			t.Errorf("%s: usage = %+v, want cost %v unknown %v", tc.model, u, tc.cost, tc.unknown)
		}
	}
	for _, m := range []string{"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "o4-mini", "gpt-5", "gpt-5-mini"} {
		if p, ok := llm.DefaultPrices()[m]; !ok || p.InputPerMTok <= 0 || p.OutputPerMTok < p.InputPerMTok {
			t.Errorf("DefaultPrices[%s] = %+v, %v", m, p, ok)
		}
	}
}

func TestReasoningModelAccepted(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(validAnalysis()) })
	c, _ := newClient(t, srv, nil)
	req := request()
	req.Model, req.MaxTokens, req.Temperature = "gpt-5-mini", 500, 0.3
	var got analysis
	if _, err := c.Generate(context.Background(), req, &got); err != nil {
		t.Fatalf("Generate with a reasoning model: %v", err)
	}
}

type countingLimiter struct {
	mu sync.Mutex
	n  int
}

func (l *countingLimiter) Wait(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	return ctx.Err()
}

func TestLimiterPacesEveryCall(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.Sequence(llmtest.ServerError(), llmtest.Reply{Content: "bad"}, llmtest.JSON(validAnalysis())))
	lim := &countingLimiter{}
	c, _ := newClient(t, srv, func(cfg *llm.Config) { cfg.Limiter = lim })
	var got analysis
	u, err := c.Generate(context.Background(), request(), &got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Calls != 3 || lim.n != 3 {
		t.Errorf("calls = %d, limiter waits = %d, want 3 and 3", u.Calls, lim.n)
	}
}

func TestConcurrentGenerate(t *testing.T) {
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(validAnalysis()) })
	c, _ := newClient(t, srv, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			var got analysis
			_, err := c.Generate(context.Background(), request(), &got)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(srv.Calls()); n != 8 {
		t.Errorf("calls = %d, want 8", n)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	if _, err := llm.New(llm.Config{BaseURL: "not a url", APIKey: testKey}); err == nil {
		t.Error("New accepted a relative base URL")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestConfigNeverPrintsKey(t *testing.T) {
	cfg := llm.Config{BaseURL: "https://api.openai.com/v1", APIKey: testKey}
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.Info("config", "cfg", cfg)
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", &cfg), buf.String()} {
		if strings.Contains(s, "SuperSecret") {
			t.Errorf("key printed: %s", s)
		}
		if !strings.Contains(s, "api.openai.com") {
			t.Errorf("config rendering lost the base URL: %s", s)
		}
	}
}

func TestOmittedOptionalFieldsAccepted(t *testing.T) {
	v := validAnalysis()
	v.Note, v.Lead = "", nil // encoding/json omits both
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(v) })
	c, _ := newClient(t, srv, nil)
	var got analysis
	if _, err := c.Generate(context.Background(), request(), &got); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if len(srv.Calls()) != 1 || !reflect.DeepEqual(got, v) {
		t.Errorf("calls = %d, out = %+v", len(srv.Calls()), got)
	}
	// A required field missing is still a problem.
	srv2 := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply {
		return llmtest.Reply{Content: `{"points": [], "sources": [], "confidence": 1}`}
	})
	c2, _ := newClient(t, srv2, nil)
	_, err := c2.Generate(context.Background(), request(), &got)
	var inv *llm.InvalidOutputError
	if !errors.As(err, &inv) || !strings.Contains(strings.Join(inv.Problems, " "), "summary") {
		t.Errorf("missing required field: err = %v", err)
	}
}

type Base struct {
	ID string `json:"id"`
}

type variety struct {
	Base
	When   time.Time `json:"when"`
	Kind   string    `json:"kind" jsonschema:"enum=news,enum=paper"`
	Score  int       `json:"score" jsonschema:"minimum=0,maximum=10"`
	Tags   []*source `json:"tags"`
	Nested struct {
		Deep []struct {
			X bool `json:"x"`
		} `json:"deep"`
	} `json:"nested"`
	Skipped string `json:"-"`
	Short   string `json:"short" jsonschema:"minLength=2,maxLength=9"`
}

func TestStrictSchemaVariety(t *testing.T) {
	raw, err := llm.StrictSchema(&variety{})
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	checkStrict(t, "$", s)
	props := s["properties"].(map[string]any)
	for _, name := range []string{"id", "when", "kind", "score", "tags", "nested", "short"} {
		if _, ok := props[name]; !ok {
			t.Errorf("property %q missing: %s", name, raw)
		}
	}
	if _, ok := props["Skipped"]; ok {
		t.Errorf(`json:"-" field present`)
	}
	if w := props["when"].(map[string]any); w["type"] != "string" || w["format"] != "date-time" {
		t.Errorf("when = %v", w)
	}
	if k := props["kind"].(map[string]any); len(k["enum"].([]any)) != 2 {
		t.Errorf("kind = %v", k)
	}
	if sc := props["score"].(map[string]any); sc["minimum"] != float64(0) || sc["maximum"] != float64(10) {
		t.Errorf("score = %v (numeric bounds are supported in strict mode)", sc)
	}
	// A reply for the type round-trips through Generate.
	want := variety{Base: Base{ID: "1"}, When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Kind: "paper", Score: 3,
		Tags: []*source{{URL: "u", Title: "t"}}, Short: "ok"}
	want.Nested.Deep = append(want.Nested.Deep, struct {
		X bool `json:"x"`
	}{true})
	srv := llmtest.NewServer(t, func(llmtest.Call) llmtest.Reply { return llmtest.JSON(want) })
	c, _ := newClient(t, srv, nil)
	var got variety
	if _, err := c.Generate(context.Background(), request(), &got); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if !reflect.DeepEqual(got, want) || len(srv.Calls()) != 1 {
		t.Errorf("got %+v after %d calls", got, len(srv.Calls()))
	}
}
