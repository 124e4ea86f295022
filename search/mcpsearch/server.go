// Package mcpsearch makes an MCP server a search backend: it searches with
// the one tool the operator named and reads a result's text with the one
// read tool or resource the operator named, over stdio or streamable HTTP,
// with the official Go SDK. Nothing else on the server is ever called.
//
// What a server returns is untrusted data, like a web page: titles, snippets
// and texts are cleaned (valid UTF-8, no control characters) and bounded,
// never interpreted, and the server's own error texts are not passed on. A
// server that hangs, crashes or errs fails only its own search, as a
// search.BackendError. Results are addressed as mcp://<server>/<id> (URL),
// which is how citations name their provenance: "MCP server <name>".
package mcpsearch

import (
	"time"

	"github.com/researchbot/researchbot/search"
)

// Server is one configured MCP server, as package config checked it.
type Server struct {
	// Name identifies the server in citations ("MCP server <Name>"), errors
	// and the mcp:// addresses of its results: lower-case letters, digits
	// and '-'.
	Name string
	// Command and Args start a server speaking MCP over stdio; Env is the
	// child's whole environment ("KEY=value"), so that researchbot's own
	// secrets are not handed to it.
	Command string
	Args    []string
	Env     []string
	// URL is a streamable HTTP endpoint (when Command is empty); Headers
	// are sent with every request (their values are secrets).
	URL     string
	Headers map[string]string
	// SearchTool is called with {QueryArg: query text}.
	SearchTool, QueryArg string
	// ReadTool is called with {ReadArg: result id} to read a result; when
	// it is empty, ReadResource (a URI with "{id}" in it, or "{id}" alone
	// when ids are resource URIs) is read instead.
	ReadTool, ReadArg string
	ReadResource      string
	// Kinds are the query kinds the server serves (default: web).
	Kinds []search.Kind
	// Timeout bounds one search or read, connecting included (default 20 s).
	Timeout time.Duration
	// MaxConcurrency bounds the calls in flight to the server (default 4).
	MaxConcurrency int
	// MaxBytes bounds the text of one read (default 1 MiB); longer texts
	// are cut and marked truncated.
	MaxBytes int
}

// Defaults.
const (
	DefaultTimeout        = 20 * time.Second
	DefaultMaxConcurrency = 4
	DefaultMaxBytes       = 1 << 20
)

// withDefaults fills the zero fields.
func (s Server) withDefaults() Server {
	if len(s.Kinds) == 0 {
		s.Kinds = []search.Kind{search.KindWeb}
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxConcurrency <= 0 {
		s.MaxConcurrency = DefaultMaxConcurrency
	}
	if s.MaxBytes <= 0 {
		s.MaxBytes = DefaultMaxBytes
	}
	return s
}

// Transport says how the server is reached, for listings: "stdio: <command>"
// or "http: <url>" (never the headers).
func (s Server) Transport() string {
	if s.Command != "" {
		return "stdio: " + s.Command
	}
	return "http: " + s.URL
}
