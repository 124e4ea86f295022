package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// healthcheck runs `researchbot healthcheck args…` with HTTP_ADDR=addr.
func healthcheck(t *testing.T, addr string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(k string) string {
		if k == "HTTP_ADDR" {
			return addr
		}
		return ""
	}
	err := run(context.Background(), append([]string{"healthcheck"}, args...), getenv, nil, &out, &errOut)
	if e := (*exitError)(nil); errors.As(err, &e) && e.msg != "" {
		errOut.WriteString(e.msg + "\n") // what main prints
	}
	return exitCode(err, io.Discard), out.String(), errOut.String()
}

// healthServer answers /healthz with 200 and /readyz with 503 and two
// problems, as bot.HealthHandler does.
func healthServer() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("slack: not connected\nredis: unreachable\n"))
	})
	return httptest.NewServer(mux)
}

func TestHealthcheckHealthy(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := healthServer()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// ":port" (any interface, as serve's default ":8080") means this machine.
	code, stdout, stderr := healthcheck(t, ":"+port)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	if want := "healthy: GET http://127.0.0.1:" + port + "/healthz: 200 OK: ok\n"; stdout != want {
		t.Errorf("stdout = %q, want %q", stdout, want)
	}
}

func TestHealthcheckUnhealthy(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := healthServer()
	defer srv.Close()
	code, stdout, stderr := healthcheck(t, srv.Listener.Addr().String(), "--path", "/readyz")
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	want := "unhealthy: GET " + srv.URL + "/readyz: 503 Service Unavailable: slack: not connected; redis: unreachable\n"
	if stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
}

func TestHealthcheckNothingListening(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, stdout, stderr := healthcheck(t, addr)
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	if !strings.HasPrefix(stderr, "unhealthy: GET http://"+addr+"/healthz: ") || !strings.Contains(stderr, "refused") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr = %q, want one line saying the connection was refused", stderr)
	}
}

func TestHealthcheckNoAnswerInTime(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stuck := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer stuck.Close()
	code, _, stderr := healthcheck(t, stuck.Listener.Addr().String(), "--timeout", "50ms")
	if want := "unhealthy: GET " + stuck.URL + "/healthz: no answer in time\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}

func TestHealthcheckUsage(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		addr       string
		code       int
		stdout     string // substring; "" means empty
		stderrHint string // substring; "" means empty
	}{
		{[]string{"-h"}, ":8080", 0, "Usage: researchbot healthcheck", ""},
		{[]string{"--help"}, ":8080", 0, "-timeout", ""},
		{[]string{"--bogus"}, ":8080", 2, "", "researchbot healthcheck: unknown flag --bogus\nRun 'researchbot help healthcheck' for usage."},
		{[]string{"extra"}, ":8080", 2, "", "takes no arguments"},
		{[]string{"--path", "healthz"}, ":8080", 2, "", "--path must start with /"},
		{nil, "8080", 2, "", `HTTP_ADDR "8080" is not host:port`},
	} {
		code, stdout, stderr := healthcheck(t, tc.addr, tc.args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr)
		}
		if (tc.stdout == "") != (stdout == "") || !strings.Contains(stdout, tc.stdout) {
			t.Errorf("%v: stdout %q, want it to contain %q", tc.args, stdout, tc.stdout)
		}
		if (tc.stderrHint == "") != (stderr == "") || !strings.Contains(stderr, tc.stderrHint) {
			t.Errorf("%v: stderr %q, want it to contain %q", tc.args, stderr, tc.stderrHint)
		}
	}
}

func TestLocalURL(t *testing.T) {
	for addr, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/healthz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/healthz",
		"[::]:8080":      "http://[::1]:8080/healthz",
		"10.1.2.3:9000":  "http://10.1.2.3:9000/healthz",
		"localhost:8080": "http://localhost:8080/healthz",
	} {
		got, err := localURL(addr, "/healthz")
		if err != nil || got != want {
			t.Errorf("localURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, err := localURL("8080", "/healthz"); err == nil {
		t.Error(`localURL("8080") succeeded`)
	}
}
