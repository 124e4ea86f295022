// Package redistest starts a private, throw-away redis-server for tests.
//
// Each call to Start launches its own redis-server process on a free loopback
// port, with persistence off, and stops it when the test ends. Tests that need
// the real server (store, queue, rate limits, crash tests) use it; fast unit
// tests may use miniredis instead.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a running redis-server owned by one test.
type Server struct {
	// Addr is host:port of the server.
	Addr string
	// URL is a redis:// URL for the server, as REDIS_URL would hold it.
	URL string
	// kill stops the process at once (SIGKILL).
	kill func()
}

// Kill stops the server with SIGKILL at once, as a crash would, and
// returns once the process is gone.
func (s *Server) Kill() { s.kill() }

// startAttempts bounds how often Start tries another port when the one it
// picked was taken between picking and binding.
const startAttempts = 10

// readyTimeout bounds how long a redis-server may take to say it is ready.
const readyTimeout = 30 * time.Second

// Start launches a redis-server for t and returns it with a connected client.
// The server and client are closed when t ends. It fails the test (it does not
// skip) when redis-server is not installed: .ci/run installs it.
//
// The port is picked free, then bound by redis-server: another process may
// take it in between, so Start reads the server's log and, when the bind
// failed, tries another port. Readiness is the server's own "Ready to accept
// connections" line, not a polled ping.
func Start(t testing.TB) (*Server, *redis.Client) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server not found on PATH (apt-get install redis-server): %v", err)
	}
	s, _ := startProcess(t, bin, readyLine, func(int) []string { return nil })
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redistest: redis-server on %s said it was ready but does not answer: %v", s.Addr, err)
	}
	return s, c
}

// readyLine is what a redis-server logs once it accepts connections.
const readyLine = "Ready to accept connections"

// startProcess launches a redis-server with the arguments args returns for
// its port (before the common ones), waiting for ready in its log, and
// retries another port when the one picked was taken. It returns the
// server and a function that kills it now (it is killed when t ends too).
func startProcess(t testing.TB, bin, ready string, args func(port int) []string) (*Server, func()) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		port := freePort(t)
		kill, err := launchWith(t, bin, port, args(port), ready)
		if err == nil {
			s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), kill: kill}
			s.URL = "redis://" + s.Addr + "/0"
			return s, kill
		}
		if busy := (errBusy{}); !errors.As(err, &busy) || attempt == startAttempts {
			t.Fatalf("redistest: start redis-server: %v", err)
		}
	}
}

// errBusy is the bind failure Start retries on another port.
type errBusy struct{ line string }

func (e errBusy) Error() string { return "port taken: " + e.line }

// launch starts redis-server on port and waits for its log to say it is
// ready. When it exits first it returns what the log said (errBusy when
// the port was taken). A started server is stopped when t ends.
func launch(t testing.TB, bin string, port int) error {
	_, err := launchWith(t, bin, port, nil, readyLine)
	return err
}

// launchWith is launch with leading arguments (a config file, --sentinel,
// --replicaof …) and the log line that means ready. It returns a function
// that kills the server at once.
func launchWith(t testing.TB, bin string, port int, pre []string, readyMark string) (func(), error) {
	cmd := exec.Command(bin, append(pre,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", t.TempDir(),
		"--logfile", "", // the log goes to stdout, read below
	)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var last string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.Contains(line, readyMark):
				ready <- nil
				_, _ = io.Copy(io.Discard, out) // keep the pipe drained until exit
				return
			case strings.Contains(line, "Address already in use"):
				ready <- errBusy{line}
				return
			}
			last = line
		}
		ready <- fmt.Errorf("redis-server exited before it was ready: %s", last)
	}()
	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-timer.C:
		err = fmt.Errorf("redis-server on port %d was not ready within %s", port, readyTimeout)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	return kill, nil
}

// Connect returns a client for a server another test started (by its URL).
func Connect(t testing.TB, url string) (*Server, *redis.Client) {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return &Server{Addr: opt.Addr, URL: url}, c
}

// freePort returns a loopback port nobody listens on now; Start retries
// when it is taken before redis-server binds it.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
