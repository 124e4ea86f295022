package mcpsearch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchbot/researchbot/internal/mcpfake"
	"github.com/researchbot/researchbot/search"
)

// wiki is the configuration of an mcpfake server named name.
func wiki(name string) Server {
	return Server{
		Name: name, Command: "unused", SearchTool: mcpfake.SearchTool, QueryArg: "query",
		ReadTool: mcpfake.FetchTool, ReadArg: "id", Timeout: 5 * time.Second,
	}
}

// inMemory returns a backend of srv connected to fake through in-memory
// transports, one server session per client session.
func inMemory(t *testing.T, srv Server, fake *mcpfake.Server) *Backend {
	t.Helper()
	b, _ := inMemoryCounted(t, srv, fake)
	return b
}

// inMemoryCounted is inMemory that also returns how many sessions were opened.
func inMemoryCounted(t *testing.T, srv Server, fake *mcpfake.Server) (*Backend, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var sessions []*mcp.ServerSession
	b := NewWithTransport(srv, func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := fake.SDK().Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, ss)
		return ct, nil
	})
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		cancel()
		for _, ss := range sessions {
			_ = ss.Close()
			_ = ss.Wait()
		}
	})
	return b, func() int { return len(sessions) }
}

func TestSearchAndReadThroughTheConfiguredToolsOnly(t *testing.T) {
	fake := mcpfake.New(mcpfake.Options{})
	b := inMemory(t, wiki("wiki"), fake)
	res, err := b.Search(t.Context(), search.Query{Text: "redis state"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].URL != "mcp://wiki/adr-7" || res[0].Title != "ADR 7: Redis as the only state store" || !strings.HasPrefix(res[0].Snippet, "Decision record 7.") {
		t.Fatalf("results %+v", res)
	}
	name, id, ok := ParseURL(res[0].URL)
	if !ok || name != "wiki" || id != "adr-7" {
		t.Fatalf("ParseURL(%q) = %q %q %v", res[0].URL, name, id, ok)
	}
	d, err := b.Read(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "ADR 7: Redis as the only state store" || !strings.Contains(d.Text, "Postgres was considered and rejected") || d.Truncated {
		t.Fatalf("document %+v", d)
	}
	if got := [3]int{fake.Calls(mcpfake.SearchTool), fake.Calls(mcpfake.FetchTool), fake.Calls(mcpfake.DeleteTool)}; got != [3]int{1, 1, 0} {
		t.Errorf("server saw search, fetch, delete calls %v, want [1 1 0]", got)
	}
}

// A tool's error answer fails the read, without the server's text, and
// keeps the session.
func TestAToolErrorKeepsTheSession(t *testing.T) {
	fake := mcpfake.New(mcpfake.Options{})
	b, sessions := inMemoryCounted(t, wiki("wiki"), fake)
	if _, err := b.Read(t.Context(), "no-such-doc"); err == nil || !strings.Contains(err.Error(), `MCP server wiki: read tool "fetch": the tool answered with an error`) || strings.Contains(err.Error(), "no document") {
		t.Errorf("read of a missing id: %v", err)
	}
	if _, err := b.Search(t.Context(), search.Query{Text: "redis"}); err != nil {
		t.Fatal(err)
	}
	if n := sessions(); n != 1 {
		t.Errorf("%d sessions opened, want 1", n)
	}
}

func TestReadThroughAResourceAndBoundTheText(t *testing.T) {
	fake := mcpfake.New(mcpfake.Options{})
	srv := wiki("docs")
	srv.ReadTool, srv.ReadArg, srv.ReadResource, srv.MaxBytes = "", "", mcpfake.ResourceTemplate, 40
	b := inMemory(t, srv, fake)
	d, err := b.Read(t.Context(), "adr-9")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || len(d.Text) > 40 || !strings.HasPrefix(d.Text, "Decision record 9.") {
		t.Fatalf("document %+v, want the first 40 bytes, marked truncated", d)
	}
	if fake.Calls("resource") != 1 || fake.Calls(mcpfake.FetchTool) != 0 {
		t.Errorf("resource reads %d, fetch calls %d; want 1 and 0", fake.Calls("resource"), fake.Calls(mcpfake.FetchTool))
	}
}

func TestAToolThatMayWriteOrIsMissingIsRefusedBeforeAnyCall(t *testing.T) {
	writer := mcpfake.New(mcpfake.Options{SearchNotReadOnly: true})
	b := inMemory(t, wiki("writer"), writer)
	if _, err := b.Search(t.Context(), search.Query{Text: "redis"}); err == nil || !strings.Contains(err.Error(), `tool "search" is not marked read-only`) {
		t.Errorf("search on a server whose search tool may write: %v", err)
	}
	if n := writer.Calls(mcpfake.SearchTool); n != 0 {
		t.Errorf("the tool that may write was called %d times", n)
	}

	srv := wiki("wrong")
	srv.ReadTool = mcpfake.DeleteTool
	fake := mcpfake.New(mcpfake.Options{})
	b = inMemory(t, srv, fake)
	if _, err := b.Check(t.Context()); err == nil || !strings.Contains(err.Error(), `tool "delete_document" is not marked read-only`) {
		t.Errorf("check with the delete tool as the read tool: %v", err)
	}
	srv.ReadTool = "lookup"
	b = inMemory(t, srv, fake)
	if _, err := b.Check(t.Context()); err == nil || !strings.Contains(err.Error(), `the server offers no tool "lookup" (it offers: delete_document, fetch, search)`) {
		t.Errorf("check with a missing read tool: %v", err)
	}
	if n := fake.Calls(mcpfake.DeleteTool) + fake.Calls(mcpfake.SearchTool); n != 0 {
		t.Errorf("%d tool calls on a server that was refused", n)
	}
}

// web is a backend that always answers.
type web struct{}

func (web) Name() string         { return "web" }
func (web) Kinds() []search.Kind { return []search.Kind{search.KindWeb} }
func (web) Search(context.Context, search.Query) ([]search.Result, error) {
	return []search.Result{{URL: "https://example.org/redis", Title: "Redis on the web"}}, nil
}

func TestBadServersFailOnlyTheirOwnSearch(t *testing.T) {
	good := mcpfake.New(mcpfake.Options{})
	hang := mcpfake.New(mcpfake.Options{Mode: mcpfake.Hang})
	fail := mcpfake.New(mcpfake.Options{Mode: mcpfake.Fail})
	hostile := mcpfake.New(mcpfake.Options{Mode: mcpfake.Hostile})
	slow := wiki("hang")
	slow.Timeout = 200 * time.Millisecond
	backends := []search.Backend{
		web{}, inMemory(t, wiki("good"), good), inMemory(t, slow, hang),
		inMemory(t, wiki("fail"), fail), inMemory(t, wiki("hostile"), hostile),
	}
	multi := search.NewMulti(backends, search.Options{Timeout: 10 * time.Second})
	start := time.Now()
	out := multi.Search(t.Context(), search.Query{Text: "redis"})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the search took %s with a server that hangs and a 200ms timeout", took)
	}
	byBackend := map[string][]search.Result{}
	for _, r := range out.Results {
		byBackend[r.Backend] = append(byBackend[r.Backend], r)
	}
	if len(byBackend["web"]) != 1 || len(byBackend["mcp:good"]) != 1 || byBackend["mcp:good"][0].URL != "mcp://good/adr-7" {
		t.Errorf("results %+v: want the web's and the good server's", out.Results)
	}
	errs := map[string]search.BackendError{}
	for _, e := range out.Errors {
		errs[e.Backend] = e
	}
	if e, ok := errs["mcp:hang"]; !ok || !errors.Is(e.Err, context.DeadlineExceeded) || !strings.Contains(e.Error(), "no answer within 200ms") {
		t.Errorf("the hanging server's error: %v", e.Err)
	}
	if e, ok := errs["mcp:fail"]; !ok || !strings.Contains(e.Error(), "the tool answered with an error") || strings.Contains(e.Error(), "index unavailable") {
		t.Errorf("the failing server's error %v: want it named, without the server's own text", e.Err)
	}
	if len(errs) != 2 {
		t.Errorf("errors %v, want the hanging and the failing server's only", out.Errors)
	}
	// Hostile text is data: it is returned as a result's title, one line,
	// and nothing it says is done.
	h := byBackend["mcp:hostile"]
	if len(h) != 1 || h[0].Title != mcpfake.HostileText {
		t.Errorf("hostile results %+v", h)
	}
	for _, f := range []*mcpfake.Server{good, hang, fail, hostile} {
		if n := f.Calls(mcpfake.DeleteTool); n != 0 {
			t.Errorf("delete_document called %d times", n)
		}
	}
	// The hanging server's session was dropped; the next search starts a
	// new one (and times out again, as bounded).
	if _, err := backends[2].Search(t.Context(), search.Query{Text: "redis"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second search of the hanging server: %v", err)
	}
	if n := hang.Calls(mcpfake.SearchTool); n != 2 {
		t.Errorf("the hanging server saw %d searches, want 2", n)
	}
}

// stdio is the configuration of the test binary run as an mcpfake server
// over stdio in mode.
func stdio(t *testing.T, name, mode string) Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	srv := wiki(name)
	srv.Command, srv.Env = exe, []string{fakeModeEnv + "=" + mode}
	return srv
}

func TestStdioServer(t *testing.T) {
	b := New(stdio(t, "stdio", "normal"), nil)
	defer func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	desc, err := b.Check(t.Context())
	if err != nil || desc != `3 tools offered; search tool "search", read tool "fetch"` {
		t.Fatalf("check: %q, %v", desc, err)
	}
	res, err := b.Search(t.Context(), search.Query{Text: "socket mode"})
	if err != nil || len(res) != 1 || res[0].URL != "mcp://stdio/adr-9" {
		t.Fatalf("search: %+v, %v", res, err)
	}
	d, err := b.Read(t.Context(), "adr-9")
	if err != nil || !strings.Contains(d.Text, "no public endpoint") {
		t.Fatalf("read: %+v, %v", d, err)
	}
}

func TestStdioServerThatCrashes(t *testing.T) {
	b := New(stdio(t, "crash", "crash"), nil)
	defer func() { _ = b.Close() }() // the crashed child's exit status is its own
	multi := search.NewMulti([]search.Backend{web{}, b}, search.Options{})
	for range 2 { // the second search starts the server again
		out := multi.Search(t.Context(), search.Query{Text: "redis"})
		if len(out.Results) != 1 || out.Results[0].Backend != "web" {
			t.Errorf("results %+v: want the web's", out.Results)
		}
		if len(out.Errors) != 1 || out.Errors[0].Backend != "mcp:crash" || errors.Is(out.Errors[0].Err, context.DeadlineExceeded) {
			t.Errorf("errors %v: want the crashed server's, at once", out.Errors)
		}
	}
}

func TestHTTPServerGetsTheConfiguredHeaders(t *testing.T) {
	fake := mcpfake.New(mcpfake.Options{})
	h := fake.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	srv := wiki("http")
	srv.Command, srv.URL = "", ts.URL
	srv.Headers = map[string]string{"Authorization": "Bearer s3cret"}
	b := New(srv, nil)
	res, err := b.Search(t.Context(), search.Query{Text: "redis"})
	if err != nil || len(res) != 1 {
		t.Fatalf("search: %+v, %v", res, err)
	}
	_ = b.Close()

	srv.Headers = nil
	b = New(srv, nil)
	defer func() { _ = b.Close() }()
	if _, err := b.Search(t.Context(), search.Query{Text: "redis"}); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("search without the header: %v", err)
	}
	if fake.Calls(mcpfake.SearchTool) != 1 {
		t.Errorf("%d searches reached the server, want 1", fake.Calls(mcpfake.SearchTool))
	}
}

func TestURLRoundTrip(t *testing.T) {
	for _, id := range []string{"adr-7", "space key/page 42?x=1#y", "docs://adr-7"} {
		name, got, ok := ParseURL(URL("wiki", id))
		if !ok || name != "wiki" || got != id {
			t.Errorf("ParseURL(URL(wiki, %q)) = %q %q %v", id, name, got, ok)
		}
	}
	for _, u := range []string{"https://wiki/adr-7", "mcp://wiki/", "mcp:///x"} {
		if _, _, ok := ParseURL(u); ok {
			t.Errorf("ParseURL(%q) accepted", u)
		}
	}
}

// NewWithTransport returns the backend of srv over the transports dial
// makes, one per session (tests: mcp.NewInMemoryTransports).
func NewWithTransport(srv Server, dial func() (mcp.Transport, error)) *Backend {
	return newBackend(srv.withDefaults(), dial)
}
