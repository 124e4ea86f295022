package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/researchbot/researchbot/config"
)

// healthcheckAbout is what `researchbot help healthcheck` explains.
const healthcheckAbout = `Asks the researchbot process on this machine whether it is healthy: an HTTP
GET of /healthz at HTTP_ADDR (the address serve and worker listen on; a
missing or wildcard host means this machine). Prints one line and exits 0 when
the answer is 200, 1 otherwise. For container health checks: the image has no
curl. --path /readyz asks whether it is ready (Slack connected, Redis up).`

// cmdHealthcheck GETs the local health endpoint and reports the answer in
// one line: on stdout with exit 0 when healthy, on stderr with exit 1 when
// not.
func cmdHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("healthcheck")
	path := fs.String("path", "/healthz", "the endpoint to ask")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	rest, err := parseFlags(fs, "healthcheck", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "healthcheck", "takes no arguments (got %q)", rest[0])
	}
	if !strings.HasPrefix(*path, "/") {
		return usageError(stderr, "healthcheck", "--path must start with / (got %q)", *path)
	}
	// Only HTTP_ADDR matters here; the process being checked reports any
	// other configuration problem itself.
	cfg, _ := config.Load(getenv)
	target, err := localURL(cfg.HTTPAddr, *path)
	if err != nil {
		return &exitError{code: 2, msg: "researchbot healthcheck: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	status, err := probe(ctx, target)
	if err != nil {
		return &exitError{code: 1, msg: "unhealthy: " + err.Error()}
	}
	fmt.Fprintln(stdout, "healthy: GET "+target+": "+status)
	return nil
}

// localURL turns a listen address (":8080", "0.0.0.0:8080", "[::]:8080",
// "10.0.0.5:8080") into the URL of path on it, as seen from this machine.
func localURL(addr, path string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("HTTP_ADDR %q is not host:port (for example :8080)", addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// probe GETs target without a proxy or kept-alive connection and returns
// the status and body of a 200 answer, or an error that says what went
// wrong; either fits on one line (the body's lines are joined with "; ").
func probe(ctx context.Context, target string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", err
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("GET %s: no answer in time", target)
		}
		var op *net.OpError
		if errors.As(err, &op) {
			return "", fmt.Errorf("GET %s: %w", target, op.Err)
		}
		return "", fmt.Errorf("GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	line := resp.Status
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 {
		line += ": " + strings.Join(lines, "; ")
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", target, line)
	}
	return line, nil
}
