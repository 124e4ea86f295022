package mcpsearch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchbot/researchbot/search"
)

// Backend is one MCP server as a search.Backend, and the reader of its
// results. It keeps one session, opened on first use and opened again after
// the server went away. It is safe for concurrent use; Close ends it.
type Backend struct {
	srv    Server
	client *mcp.Client
	// dial makes the transport of a new session (tests use in-memory ones).
	dial func() (mcp.Transport, error)
	// slots bounds the calls in flight (Server.MaxConcurrency); lock guards
	// session and closed and is held while a session is opened.
	slots   chan struct{}
	lock    chan struct{}
	session *mcp.ClientSession
	closed  bool
	// closing counts sessions being closed in the background.
	closing sync.WaitGroup
}

// New returns the backend of srv; httpClient carries
// the HTTP transport's requests (nil: http.DefaultTransport).
func New(srv Server, httpClient *http.Client) *Backend {
	srv = srv.withDefaults()
	b := newBackend(srv, nil)
	b.dial = func() (mcp.Transport, error) { return transport(srv, httpClient), nil }
	return b
}

func newBackend(srv Server, dial func() (mcp.Transport, error)) *Backend {
	return &Backend{
		srv:    srv,
		client: mcp.NewClient(&mcp.Implementation{Name: "researchbot", Version: "1"}, nil),
		dial:   dial,
		slots:  make(chan struct{}, srv.MaxConcurrency),
		lock:   make(chan struct{}, 1),
	}
}

// transport is the SDK transport of srv: a child process over stdio, or
// streamable HTTP with srv's headers.
func transport(srv Server, httpClient *http.Client) mcp.Transport {
	if srv.Command != "" {
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = srv.Env
		if cmd.Env == nil {
			cmd.Env = []string{}
		}
		return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	base := http.DefaultTransport
	if httpClient != nil && httpClient.Transport != nil {
		base = httpClient.Transport
	}
	return &mcp.StreamableClientTransport{
		Endpoint:             srv.URL,
		HTTPClient:           &http.Client{Transport: headers{base: base, h: srv.Headers}},
		MaxRetries:           1,
		DisableStandaloneSSE: true,
	}
}

// headers adds the configured headers to every request.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// Name implements search.Backend: "mcp:<name>".
func (b *Backend) Name() string { return "mcp:" + b.srv.Name }

// Kinds implements search.Backend.
func (b *Backend) Kinds() []search.Kind { return b.srv.Kinds }

// Server returns the backend's configuration.
func (b *Backend) Server() Server { return b.srv }

// Search implements search.Backend: one call of the search tool.
func (b *Backend) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	var res *mcp.CallToolResult
	err := b.call(ctx, func(ctx context.Context, cs *mcp.ClientSession) (err error) {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: b.srv.SearchTool, Arguments: map[string]any{b.srv.QueryArg: q.Text}})
		return err
	})
	if err != nil {
		return nil, err
	}
	items, err := searchItems(res)
	if err != nil {
		return nil, fmt.Errorf("search tool %q: %w", b.srv.SearchTool, err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = search.DefaultLimit
	}
	var out []search.Result
	for _, it := range items {
		id := firstNonEmpty(it.ID, it.URL)
		if id == "" || len(id) > maxID {
			continue
		}
		out = append(out, search.Result{
			URL:     URL(b.srv.Name, id),
			Title:   cleanLine(it.Title, maxTitle),
			Snippet: cleanLine(firstNonEmpty(it.Snippet, it.Text), maxSnippet),
		})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Document is the text of one result.
type Document struct {
	Title, Text string
	// Truncated is set when Text was cut at Server.MaxBytes.
	Truncated bool
}

// Read reads result id with the configured read tool or resource.
func (b *Backend) Read(ctx context.Context, id string) (Document, error) {
	var (
		title, text string
		tool        *mcp.CallToolResult
	)
	err := b.call(ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
		if b.srv.ReadTool == "" {
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resourceURI(b.srv.ReadResource, id)})
			if err == nil {
				text = resourceText(res)
			}
			return err
		}
		var err error
		tool, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: b.srv.ReadTool, Arguments: map[string]any{b.srv.ReadArg: id}})
		return err
	})
	if err == nil && tool != nil {
		// A tool's error answer is the tool's, not the session's: read it
		// after the call, which keeps the session.
		if title, text, err = readText(tool); err != nil {
			err = fmt.Errorf("read tool %q: %w", b.srv.ReadTool, err)
		}
	}
	if err != nil {
		return Document{}, fmt.Errorf("MCP server %s: %w", b.srv.Name, err)
	}
	d := Document{Title: cleanLine(title, maxTitle)}
	d.Text, d.Truncated = cleanText(text, b.srv.MaxBytes)
	return d, nil
}

// Check connects (or reuses the session), lists the server's tools and
// confirms the configured ones are there and read-only; it returns a short
// description of what was found.
func (b *Backend) Check(ctx context.Context) (string, error) {
	var n int
	err := b.call(ctx, func(ctx context.Context, cs *mcp.ClientSession) error {
		tools, err := b.verify(ctx, cs)
		n = len(tools)
		return err
	})
	if err != nil {
		return "", err
	}
	read := fmt.Sprintf("read tool %q", b.srv.ReadTool)
	if b.srv.ReadTool == "" {
		read = fmt.Sprintf("resource %q", b.srv.ReadResource)
	}
	return fmt.Sprintf("%d tools offered; search tool %q, %s", n, b.srv.SearchTool, read), nil
}

// call runs f on the session within the server's timeout and concurrency
// bound. A session whose transport failed or timed out is dropped, so the
// next call starts the server again.
func (b *Backend) call(ctx context.Context, f func(context.Context, *mcp.ClientSession) error) error {
	ctx, cancel := context.WithTimeout(ctx, b.srv.Timeout)
	defer cancel()
	select {
	case b.slots <- struct{}{}:
		defer func() { <-b.slots }()
	case <-ctx.Done():
		return b.ctxErr(ctx, "waiting for a free slot")
	}
	cs, err := b.sessionFor(ctx)
	if err != nil {
		return err
	}
	err = f(ctx, cs)
	if err == nil {
		return nil
	}
	var wire *jsonrpc.Error
	if ctx.Err() != nil || !errors.As(err, &wire) {
		b.drop(cs)
	}
	if ctx.Err() != nil {
		return b.ctxErr(ctx, "calling the server")
	}
	if wire != nil {
		// The server's own message is untrusted text: keep only its code.
		return fmt.Errorf("the server refused the call (JSON-RPC error %d)", wire.Code)
	}
	return err
}

// ctxErr words a cancelled or timed-out call.
func (b *Backend) ctxErr(ctx context.Context, doing string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s while %s: %w", b.srv.Timeout, doing, context.DeadlineExceeded)
	}
	return ctx.Err()
}

// sessionFor returns the open session, opening and verifying one if needed.
func (b *Backend) sessionFor(ctx context.Context) (*mcp.ClientSession, error) {
	select {
	case b.lock <- struct{}{}:
		defer func() { <-b.lock }()
	case <-ctx.Done():
		return nil, b.ctxErr(ctx, "waiting for the connection")
	}
	if b.closed {
		return nil, errors.New("the backend is closed")
	}
	if b.session != nil {
		return b.session, nil
	}
	t, err := b.dial()
	if err != nil {
		return nil, err
	}
	cs, err := b.client.Connect(ctx, t, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, b.ctxErr(ctx, "connecting")
		}
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := b.verify(ctx, cs); err != nil {
		b.closeLater(cs)
		if ctx.Err() != nil {
			return nil, b.ctxErr(ctx, "listing tools")
		}
		return nil, err
	}
	b.session = cs
	return cs, nil
}

// verify lists the server's tools and checks that the configured ones
// exist and are not marked as tools that write.
func (b *Backend) verify(ctx context.Context, cs *mcp.ClientSession) ([]string, error) {
	offered := map[string]*mcp.Tool{}
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		offered[t.Name] = t
		names = append(names, cleanLine(t.Name, 64))
	}
	var errs []error
	for _, want := range []string{b.srv.SearchTool, b.srv.ReadTool} {
		if want == "" {
			continue
		}
		t, ok := offered[want]
		switch {
		case !ok:
			slices.Sort(names)
			errs = append(errs, fmt.Errorf("the server offers no tool %q (it offers: %s)", want, strings.Join(names, ", ")))
		case writes(t):
			errs = append(errs, fmt.Errorf("tool %q is not marked read-only by the server: researchbot never calls a tool that may write", want))
		}
	}
	return names, errors.Join(errs...)
}

// writes reports whether the server's annotations say the tool may change
// its environment (annotations absent: the operator's word stands).
func writes(t *mcp.Tool) bool {
	a := t.Annotations
	if a == nil {
		return false
	}
	return !a.ReadOnlyHint || (a.DestructiveHint != nil && *a.DestructiveHint)
}

// drop forgets cs if it is the current session and closes it.
func (b *Backend) drop(cs *mcp.ClientSession) {
	b.lock <- struct{}{}
	if b.session == cs {
		b.session = nil
	}
	<-b.lock
	b.closeLater(cs)
}

// closeLater closes cs in the background (a stdio server may take its
// terminate grace period to exit); Close waits for it.
func (b *Backend) closeLater(cs *mcp.ClientSession) {
	b.closing.Add(1)
	go func() { // owner: b; awaited by Close
		defer b.closing.Done()
		_ = cs.Close()
	}()
}

// Close ends the session (stopping a stdio server) and waits for sessions
// being closed.
func (b *Backend) Close() error {
	b.lock <- struct{}{}
	cs := b.session
	b.session, b.closed = nil, true
	<-b.lock
	var err error
	if cs != nil {
		err = cs.Close()
	}
	b.closing.Wait()
	return err
}
