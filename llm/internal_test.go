package llm

import (
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRetryAfterIsCappedAndPrefersMilliseconds covers what llm adds to
// internal/retryafter's reading (tested there): OpenAI's retry-after-ms
// header wins, and every wait is capped at maxRetryAfter.
func TestRetryAfterIsCappedAndPrefersMilliseconds(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		sec, ms string
		want    time.Duration
		wantOK  bool
	}{
		{"seconds", "3", "", 3 * time.Second, true},
		{"an HTTP date", now.Add(20 * time.Second).Format(http.TimeFormat), "", 20 * time.Second, true},
		{"unreadable", "soon", "", 0, false},
		{"capped", "86400", "", maxRetryAfter, true},
		{"milliseconds preferred", "9", "250", 250 * time.Millisecond, true},
		{"milliseconds capped", "", "86400000", maxRetryAfter, true},
		{"unreadable milliseconds fall back to seconds", "2", "x", 2 * time.Second, true},
	}
	for _, tc := range cases {
		got, ok := (&respMeta{retryAfterHd: tc.sec, retryAfterMs: tc.ms}).retryAfter(now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: retry-after %q, retry-after-ms %q = %v, %v; want %v, %v", tc.name, tc.sec, tc.ms, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestRecordingDoer(t *testing.T) {
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get("api-key")
		w.Header().Set("Retry-After", "4")
		w.Header().Set("Retry-After-Ms", "4000")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	meta := &respMeta{}
	req := httptest.NewRequest(http.MethodPost, srv.URL, nil)
	req.RequestURI = ""
	ctxReq := req.WithContext(withMeta(t.Context(), meta))
	d := &recordingDoer{inner: srv.Client(), azureKey: "azure-secret"}
	resp, err := d.Do(ctxReq)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !meta.sent || meta.status != 429 || meta.retryAfterHd != "4" || meta.retryAfterMs != "4000" {
		t.Errorf("meta = %+v", meta)
	}
	if gotKey != "azure-secret" {
		t.Errorf("api-key header = %q", gotKey)
	}
}

func TestRedact(t *testing.T) {
	key := "my-custom-provider-key-xyz"
	in := "bad key " + key + " and sk-proj-abcDEF123456 and sk-****1234abcd"
	out := redact(in, key)
	for _, leak := range []string{key, "sk-proj", "abcDEF", "sk-****"} {
		if strings.Contains(out, leak) {
			t.Errorf("redact left %q in %q", leak, out)
		}
	}
	if !strings.HasPrefix(out, "bad key [redacted]") {
		t.Errorf("redact mangled the text: %q", out)
	}
}

func TestSanitizeName(t *testing.T) {
	if got := sanitizeName("Plan[pkg.Thing]"); got != "PlanpkgThing" {
		t.Errorf("sanitizeName = %q", got)
	}
	if got := sanitizeName(""); got != "output" {
		t.Errorf("sanitizeName(\"\") = %q", got)
	}
	if got := sanitizeName(strings.Repeat("a", 100)); len(got) != 64 {
		t.Errorf("sanitizeName long = %d chars", len(got))
	}
}

func TestAzureBaseURLs(t *testing.T) {
	for _, u := range []string{"https://res.openai.azure.com", "https://res.openai.azure.com/openai/v1/", "http://localhost:11434/v1", ""} {
		if _, err := New(Config{BaseURL: u, APIKey: "k"}); err != nil {
			t.Errorf("New(%q): %v", u, err)
		}
	}
}

// TestImports keeps the dependency direction: llm depends on no other
// researchbot package but the Retry-After reader and the clock's wait, and llmtest (imported by other packages' tests) only on
// the standard library.
func TestImports(t *testing.T) {
	check := func(dir string, allowed func(path string) bool) {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !allowed(p) {
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
	check(".", func(p string) bool {
		return !strings.HasPrefix(p, "github.com/researchbot/") || p == "github.com/researchbot/researchbot/internal/retryafter" || p == "github.com/researchbot/researchbot/internal/clockwait"
	})
	check("llmtest", func(p string) bool { return !strings.Contains(strings.Split(p, "/")[0], ".") })
}
