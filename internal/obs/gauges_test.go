package obs

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// scrape GETs path from the handler.
func scrape(m *Metrics, path string, checks ...Check) (int, string) {
	rec := httptest.NewRecorder()
	Handler(m, checks...).ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	return rec.Code, rec.Body.String()
}

func TestRunStatesGauge(t *testing.T) {
	m := New()
	fail := false
	m.WatchRunStates(func(context.Context) (map[string]int, error) {
		if fail {
			return nil, errors.New("redis down")
		}
		return map[string]int{"waiting": 3, "running": 1}, nil
	})
	_, body := scrape(m, "/metrics")
	for _, want := range []string{`researchbot_runs{state="waiting"} 3`, `researchbot_runs{state="running"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	fail = true
	if code, _ := scrape(m, "/metrics"); code != 500 {
		t.Errorf("a failing count should make the scrape fail visibly, got %d", code)
	}
}

func TestQueueGauges(t *testing.T) {
	m := New()
	m.WatchQueues(func(context.Context) (map[string]QueueStat, error) {
		return map[string]QueueStat{"runs": {Pending: 4, Active: 2, Scheduled: 1, Latency: 1500 * time.Millisecond}}, nil
	})
	_, body := scrape(m, "/metrics")
	for _, want := range []string{
		`researchbot_queue_tasks{queue="runs",state="pending"} 4`, `researchbot_queue_tasks{queue="runs",state="active"} 2`,
		`researchbot_queue_tasks{queue="runs",state="retry"} 0`, `researchbot_queue_latency_seconds{queue="runs"} 1.5`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestCallMetrics(t *testing.T) {
	m := New()
	m.LLMCall("writer", "ok", 2*time.Second)
	m.LLMCall("writer", "error", time.Second)
	m.Search(map[string]string{"arxiv": "results", "searxng": "error"}, 300*time.Millisecond)
	m.Fetch("2xx", 1200, 100*time.Millisecond)
	m.Fetch("blocked_address", 0, time.Millisecond)
	_, body := scrape(m, "/metrics")
	for _, want := range []string{
		`researchbot_llm_call_duration_seconds_count{outcome="ok",role="writer"} 1`,
		`researchbot_llm_call_duration_seconds_count{outcome="error",role="writer"} 1`,
		`researchbot_searches_total{backend="searxng",outcome="error"} 1`,
		`researchbot_fetch_duration_seconds_count{outcome="blocked_address"} 1`,
		`researchbot_fetch_text_bytes_total 1200`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestReadiness(t *testing.T) {
	m := New()
	up := Check{Name: "redis", Ready: func(context.Context) error { return nil }}
	down := Check{Name: "slack", Ready: func(context.Context) error { return errors.New("not connected") }}
	if code, body := scrape(m, "/readyz", up); code != 200 || body != "ready\n" {
		t.Errorf("ready: %d %q", code, body)
	}
	if code, body := scrape(m, "/readyz", up, down); code != 503 || body != "slack: not connected\n" {
		t.Errorf("not ready: %d %q", code, body)
	}
	if code, body := scrape(m, "/healthz", down); code != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
}
