package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/mcpfake"
	"github.com/researchbot/researchbot/internal/researchtest"
)

// mcpEntry is one MCP_SERVERS entry for an mcpfake server at url.
func mcpEntry(name, url, readTool string) map[string]any {
	return map[string]any{
		"name": name, "url": url, "headers": map[string]string{"Authorization": "WIKI_AUTH"},
		"search": map[string]string{"tool": mcpfake.SearchTool, "query_argument": "query"},
		"read":   map[string]string{"tool": readTool, "argument": "id"},
	}
}

// TestSourcesListsAndChecksEveryBackend: the web backend and each MCP
// server get a row with their state; one failing check makes exit 1, and
// the header's secret is never printed.
func TestSourcesListsAndChecksEveryBackend(t *testing.T) {
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	fake := mcpfake.New(mcpfake.Options{})
	ts := httptest.NewServer(fake.Handler())
	defer ts.Close()
	servers := func(entries ...any) string {
		raw, err := json.Marshal(entries)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	env := map[string]string{
		"SEARXNG_URL": web.URL(), "WIKI_AUTH": "Bearer wiki-s3cret",
		"MCP_SERVERS": servers(mcpEntry("wiki", ts.URL, mcpfake.FetchTool)),
	}
	code, stdout, stderr := runCLI(t, env, "sources")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TYPE") ||
		!strings.Contains(lines[1], "searxng") || !strings.Contains(lines[1], "ok") ||
		!strings.Contains(lines[2], "mcp:wiki") || !strings.Contains(lines[2], ` ok `) ||
		!strings.Contains(lines[2], `http: `+ts.URL+`; 3 tools offered; search tool "search", read tool "fetch"`) {
		t.Errorf("table:\n%s", stdout)
	}

	env["MCP_SERVERS"] = servers(mcpEntry("wiki", ts.URL, mcpfake.FetchTool), mcpEntry("wrong", ts.URL, "lookup"))
	code, stdout, stderr = runCLI(t, env, "sources")
	wrong := strings.Split(strings.TrimSpace(stdout), "\n")[3]
	if code != 1 || !strings.Contains(wrong, `mcp:wrong`) || !strings.Contains(wrong, ` FAILED `) ||
		!strings.Contains(wrong, `http: `+ts.URL+`; the server offers no tool "lookup" (it offers: delete_document, fetch, search)`) {
		t.Errorf("exit %d, stdout:\n%s", code, stdout)
	}
	if strings.Contains(stdout+stderr, "s3cret") {
		t.Error("the header's secret was printed")
	}
	if n := fake.Calls(mcpfake.SearchTool) + fake.Calls(mcpfake.FetchTool) + fake.Calls(mcpfake.DeleteTool); n != 0 {
		t.Errorf("checking called %d tools; it only lists them", n)
	}
}
