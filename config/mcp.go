package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// MCPServer is one MCP server researchbot searches (MCP_SERVERS).
type MCPServer struct {
	// Name names the server in citations ("MCP server <Name>"): lower-case
	// letters, digits and '-'.
	Name string
	// Command and Args start a stdio server; Env is its whole environment
	// ("KEY=value": PATH, HOME and the variables the file names).
	Command string
	Args    []string
	Env     []string
	// URL is a streamable HTTP endpoint; Headers are sent with every request,
	// their values read from the variables the file names (secrets).
	URL     string
	Headers map[string]string
	// SearchTool is called with {QueryArg: query}.
	SearchTool, QueryArg string
	// ReadTool is called with {ReadArg: id}; or ReadResource (a URI template
	// with {id}) is read.
	ReadTool, ReadArg, ReadResource string
	// Kinds are the query kinds the server serves (web, academic, news).
	Kinds          []string
	Timeout        time.Duration
	MaxConcurrency int
}

// mcpServerFile is one server as the operator writes it.
type mcpServerFile struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Search  struct {
		Tool          string `json:"tool"`
		QueryArgument string `json:"query_argument"`
	} `json:"search"`
	Read struct {
		Tool     string `json:"tool"`
		Argument string `json:"argument"`
		Resource string `json:"resource"`
	} `json:"read"`
	Kinds          []string `json:"kinds"`
	Timeout        string   `json:"timeout"`
	MaxConcurrency int      `json:"max_concurrency"`
}

var (
	mcpNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`) })
	envNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// mcpServers reads MCP_SERVERS: a JSON array of servers, inline or in the
// file it names. Values of headers and of a stdio server's environment are
// names of variables, read here; they are never in the file.
func (p *parser) mcpServers(name string) []MCPServer {
	v := p.str(name, "")
	if v == "" {
		return nil
	}
	raw := []byte(v)
	if !strings.HasPrefix(v, "[") {
		b, err := os.ReadFile(v)
		if err != nil {
			p.bad(name, "want a JSON array of servers or a file holding one: %v", err)
			return nil
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var files []mcpServerFile
	if err := dec.Decode(&files); err != nil {
		p.bad(name, "want a JSON array of servers: %v", err)
		return nil
	}
	var out []MCPServer
	seen := map[string]bool{}
	for i, f := range files {
		label := fmt.Sprintf("server %d", i+1)
		if f.Name != "" {
			label = "server " + f.Name
		}
		bad := func(format string, args ...any) { p.bad(name, "%s: %s", label, fmt.Sprintf(format, args...)) }
		s, ok := p.mcpServer(f, bad)
		if seen[s.Name] {
			bad("the name is used twice")
			ok = false
		}
		seen[s.Name] = true
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// mcpServer checks one server, reporting each problem through bad.
func (p *parser) mcpServer(f mcpServerFile, bad func(string, ...any)) (MCPServer, bool) {
	n := 0
	check := func(ok bool, format string, args ...any) {
		if !ok {
			bad(format, args...)
			n++
		}
	}
	s := MCPServer{
		Name: f.Name, Command: f.Command, Args: f.Args, URL: f.URL,
		SearchTool: f.Search.Tool, QueryArg: f.Search.QueryArgument,
		ReadTool: f.Read.Tool, ReadArg: f.Read.Argument, ReadResource: f.Read.Resource,
		Kinds: f.Kinds, Timeout: 20 * time.Second, MaxConcurrency: 4,
	}
	check(mcpNamePattern().MatchString(s.Name), "want a name of 1-40 lower-case letters, digits and '-', got %q", s.Name)
	check((s.Command == "") != (s.URL == ""), "want either command (stdio) or url (streamable HTTP)")
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		check(err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil, "want an http(s) url without credentials (put them in headers)")
	}
	check(s.Command != "" || (len(f.Args) == 0 && len(f.Env) == 0), "args and env are for a stdio server (command)")
	check(s.URL != "" || len(f.Headers) == 0, "headers are for an HTTP server (url)")
	check(s.SearchTool != "" && s.QueryArg != "", "want search.tool and search.query_argument")
	check((s.ReadTool == "") != (s.ReadResource == ""), "want either read.tool (with read.argument) or read.resource")
	check(s.ReadTool == "" || s.ReadArg != "", "want read.argument, the read tool's argument that takes a result's id")
	check(s.ReadResource == "" || strings.Contains(s.ReadResource, "{id}"), "want {id} in read.resource, where a result's id goes")
	for _, k := range s.Kinds {
		check(slices.Contains([]string{"web", "academic", "news"}, k), "want kinds among web, academic and news, got %q", k)
	}
	if len(s.Kinds) == 0 {
		s.Kinds = []string{"web"}
	}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		check(err == nil && d > 0, "want a timeout such as 20s, got %q", f.Timeout)
		if err == nil && d > 0 {
			s.Timeout = d
		}
	}
	check(f.MaxConcurrency >= 0, "want max_concurrency of at least 1, got %d", f.MaxConcurrency)
	if f.MaxConcurrency > 0 {
		s.MaxConcurrency = f.MaxConcurrency
	}
	// Secrets come from variables named in the file, never from the file.
	fromEnv := func(what, key, variable string) string {
		check(envNamePattern().MatchString(variable), "%s %s: want the name of an environment variable holding the value, got something else", what, key)
		value := strings.TrimSpace(p.getenv(variable))
		check(value != "" || !envNamePattern().MatchString(variable), "%s %s: variable %s is not set", what, key, variable)
		return value
	}
	if len(f.Headers) > 0 {
		s.Headers = map[string]string{}
	}
	for _, h := range sortedKeys(f.Headers) {
		s.Headers[h] = fromEnv("header", h, f.Headers[h])
	}
	if s.Command != "" {
		for _, k := range []string{"PATH", "HOME"} {
			if v := p.getenv(k); v != "" {
				s.Env = append(s.Env, k+"="+v)
			}
		}
		for _, k := range sortedKeys(f.Env) {
			check(envNamePattern().MatchString(k), "env %q: want a variable name", k)
			s.Env = append(s.Env, k+"="+fromEnv("env", k, f.Env[k]))
		}
	}
	return s, n == 0
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
