package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const mcpExample = `[
  {"name": "wiki", "command": "/usr/local/bin/wiki-mcp", "args": ["--read-only"],
   "env": {"WIKI_TOKEN": "WIKI_MCP_TOKEN"},
   "search": {"tool": "search", "query_argument": "query"},
   "read": {"tool": "fetch", "argument": "id"},
   "kinds": ["web", "news"], "timeout": "5s", "max_concurrency": 2},
  {"name": "notes", "url": "https://mcp.example.com/mcp",
   "headers": {"Authorization": "NOTES_MCP_AUTH"},
   "search": {"tool": "find", "query_argument": "q"},
   "read": {"resource": "notes://{id}"}}
]`

func TestMCPServersFromAFileWithSecretsFromTheEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(mcpExample), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(env(map[string]string{
		"MCP_SERVERS": path, "WIKI_MCP_TOKEN": "wiki-secret", "NOTES_MCP_AUTH": "Bearer notes-secret",
		"PATH": "/usr/bin", "HOME": "/home/rb", "OPENAI_API_KEY": "sk-not-for-children",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []MCPServer{
		{Name: "wiki", Command: "/usr/local/bin/wiki-mcp", Args: []string{"--read-only"},
			Env:        []string{"PATH=/usr/bin", "HOME=/home/rb", "WIKI_TOKEN=wiki-secret"},
			SearchTool: "search", QueryArg: "query", ReadTool: "fetch", ReadArg: "id",
			Kinds: []string{"web", "news"}, Timeout: 5 * time.Second, MaxConcurrency: 2},
		{Name: "notes", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer notes-secret"},
			SearchTool: "find", QueryArg: "q", ReadResource: "notes://{id}",
			Kinds: []string{"web"}, Timeout: 20 * time.Second, MaxConcurrency: 4},
	}
	if !reflect.DeepEqual(c.MCPServers, want) {
		t.Errorf("servers\n got %+v\nwant %+v", c.MCPServers, want)
	}
}

func TestMCPServersReportEveryProblemAtOnce(t *testing.T) {
	bad := `[
	  {"name": "Wiki", "command": "x", "url": "http://y", "search": {"tool": "search"}, "read": {"tool": "fetch"}},
	  {"name": "ok", "url": "https://user:pw@h/mcp", "headers": {"Authorization": "UNSET_VAR", "X-Key": "not a name"},
	   "search": {"tool": "s", "query_argument": "q"}, "read": {"resource": "notes://x"}, "kinds": ["images"], "timeout": "soon"},
	  {"name": "ok", "command": "x", "search": {"tool": "s", "query_argument": "q"}, "read": {"tool": "r", "argument": "id"}}
	]`
	_, err := Load(env(map[string]string{"MCP_SERVERS": bad}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`server Wiki: want a name of 1-40 lower-case letters`,
		`server Wiki: want either command (stdio) or url`,
		`server Wiki: want search.tool and search.query_argument`,
		`server Wiki: want read.argument`,
		`server ok: want an http(s) url without credentials`,
		`server ok: header Authorization: variable UNSET_VAR is not set`,
		`server ok: header X-Key: want the name of an environment variable`,
		`server ok: want {id} in read.resource`,
		`server ok: want kinds among web, academic and news, got "images"`,
		`server ok: want a timeout such as 20s, got "soon"`,
		`server ok: the name is used twice`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "pw") {
		t.Errorf("the error repeats a credential: %v", err)
	}
	for _, v := range []string{"{", `[{"name": "x", "comand": "typo"}]`, "/no/such/file.json"} {
		if _, err := Load(env(map[string]string{"MCP_SERVERS": v})); err == nil || !strings.Contains(err.Error(), "MCP_SERVERS: want a JSON array") {
			t.Errorf("MCP_SERVERS=%s: %v", v, err)
		}
	}
}
