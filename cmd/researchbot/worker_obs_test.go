package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/researchtest"
)

// TestWorkerServesHealthAndMetrics: `researchbot worker` answers /healthz,
// /readyz and /metrics on HTTP_ADDR like serve does (run states, queue
// depth and latency), `researchbot healthcheck` passes against it, and it
// stops cleanly.
func TestWorkerServesHealthAndMetrics(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	addr := closedAddr(t)
	getenv := w.env(map[string]string{"HTTP_ADDR": addr})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"worker", "--queues", "terminal-test"}, getenv, nil, io.Discard, &stderr)
	}()

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, _ := get("/healthz"); code == 200 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("worker stopped: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker never answered /healthz")
		}
	}
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	code, body := get("/metrics")
	for _, want := range []string{
		`researchbot_queue_tasks{queue="terminal-test",state="pending"} 0`,
		`researchbot_queue_latency_seconds{queue="terminal-test"} 0`,
		`researchbot_oldest_unleased_run_age_seconds 0`,
		`# TYPE go_goroutines gauge`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %s", code, want)
		}
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"healthcheck"}, getenv, nil, &out, &errb); err != nil || !strings.HasPrefix(out.String(), "healthy: GET http://"+addr+"/healthz: 200 OK") {
		t.Errorf("healthcheck against the worker: %v, %q %q", err, out.String(), errb.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("worker: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not stop")
	}
}
