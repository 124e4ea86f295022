// Package redistest starts a private, throw-away redis-server for tests.
//
// Each call to Start launches its own redis-server process on a free loopback
// port, with persistence off, and stops it when the test ends. Tests that need
// the real server (store, queue, rate limits, crash tests) use it; fast unit
// tests may use miniredis instead.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
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
	cmd *exec.Cmd
}

// Start launches a redis-server for t and returns it with a connected client.
// The server and client are closed when t ends. It fails the test (it does not
// skip) when redis-server is not installed: .ci/run installs it.
func Start(t testing.TB) (*Server, *redis.Client) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server not found on PATH (apt-get install redis-server): %v", err)
	}
	port := freePort(t)
	dir := t.TempDir()
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"),
	)
	if err := cmd.Start(); err != nil {
		t.Fatalf("redistest: start redis-server: %v", err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	s.URL = "redis://" + s.Addr + "/0"
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := c.Ping(context.Background()).Err(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("redistest: redis-server on %s did not answer: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, c
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

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("redistest: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
