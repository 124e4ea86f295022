package main

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
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
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "TYPE") ||
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

// TestSourcesJSONAndWorkspaceSearchRow: --json writes one backend a line
// (a failed check still exits 1); the Slack workspace search has a row with
// its state and no check, whether on for every channel, for some, or off,
// and never makes the command fail.
func TestSourcesJSONAndWorkspaceSearchRow(t *testing.T) {
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	fake := mcpfake.New(mcpfake.Options{})
	ts := httptest.NewServer(fake.Handler())
	defer ts.Close()
	raw, err := json.Marshal([]any{mcpEntry("wrong", ts.URL, "lookup")})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SEARXNG_URL": web.URL(), "WIKI_AUTH": "Bearer wiki-s3cret", "MCP_SERVERS": string(raw)}
	code, stdout, _ := runCLI(t, env, "sources", "--json")
	rows := decodeLines[sourceJSON](t, stdout)
	want := []sourceJSON{
		{Type: "web", Backend: "searxng", Serves: []string{"web", "news", "academic"}, State: "ok", Detail: "answered a test search (results: 1)"},
		{Type: "mcp", Backend: "mcp:wrong", Serves: []string{"web"}, Where: "http: " + ts.URL, State: "failed",
			Detail: `the server offers no tool "lookup" (it offers: delete_document, fetch, search)`},
		{Type: "slack", Backend: "slack-workspace", Serves: []string{"web", "news"}, State: "off", Detail: "SLACK_WORKSPACE_SEARCH is not true"},
	}
	if code != 1 || !reflect.DeepEqual(rows, want) {
		t.Errorf("sources --json: exit %d, got\n%s\nwant %+v", code, stdout, want)
	}

	delete(env, "MCP_SERVERS")
	for _, tc := range []struct {
		env       map[string]string
		state     string
		jsonState string
		channels  []string
	}{
		{map[string]string{"SLACK_WORKSPACE_SEARCH": "true", "SLACK_BOT_TOKEN": "xoxb-1"}, "on for every channel", "not_checked", nil},
		{map[string]string{"SLACK_WORKSPACE_SEARCH": "true", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_WORKSPACE_SEARCH_CHANNELS": "*"}, "on for every channel", "not_checked", nil},
		{map[string]string{"SLACK_WORKSPACE_SEARCH": "true", "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_WORKSPACE_SEARCH_CHANNELS": "C1,C2"}, "on for C1,C2", "not_checked", []string{"C1", "C2"}},
		{map[string]string{"SLACK_WORKSPACE_SEARCH": "true"}, "off", "off", nil},
		{map[string]string{"SLACK_WORKSPACE_SEARCH_CHANNELS": "C1"}, "off", "off", nil},
	} {
		for k, v := range tc.env {
			env[k] = v
		}
		code, stdout, stderr := runCLI(t, env, "sources")
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		slackLine := lines[len(lines)-1]
		if code != 0 || stderr != "" || len(lines) != 3 || !strings.HasPrefix(slackLine, "slack") ||
			!strings.Contains(slackLine, "  "+tc.state+"  ") {
			t.Errorf("%v: exit %d, stderr %q, want state %q:\n%s", tc.env, code, stderr, tc.state, stdout)
		}
		if tc.jsonState == "not_checked" && !strings.Contains(slackLine, workspaceNotChecked) {
			t.Errorf("%v: the row does not say why it is not checked:\n%s", tc.env, slackLine)
		}
		code, stdout, _ = runCLI(t, env, "sources", "--json")
		rows := decodeLines[sourceJSON](t, stdout)
		if last := rows[len(rows)-1]; code != 0 || last.State != tc.jsonState || !reflect.DeepEqual(last.Channels, tc.channels) {
			t.Errorf("%v --json: exit %d, got %+v", tc.env, code, last)
		}
		for k := range tc.env {
			delete(env, k)
		}
	}
}
