package bot

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRunStatesGauge(t *testing.T) {
	m := NewMetrics()
	fail := false
	m.WatchRunStates(func(context.Context) (map[string]int, error) {
		if fail {
			return nil, errors.New("redis down")
		}
		return map[string]int{"waiting": 3, "running": 1}, nil
	})
	scrape := func() (int, string) {
		rec := httptest.NewRecorder()
		HealthHandler(m, func() bool { return true }, func(context.Context) error { return nil }).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Code, rec.Body.String()
	}
	_, body := scrape()
	for _, want := range []string{`researchbot_runs{state="waiting"} 3`, `researchbot_runs{state="running"} 1`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	fail = true
	if code, _ := scrape(); code != 500 {
		t.Errorf("a failing count should make the scrape fail visibly, got %d", code)
	}
}
