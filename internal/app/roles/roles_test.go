package roles

import (
	"context"
	"slices"
	"testing"

	"github.com/researchbot/researchbot/config"
)

// TestNewBuildsThePartsOfItsRoles: a worker's roles (Workers, HTTP) and a
// scheduler alone become those parts and no others, on the embedded
// Redis; each runs and stops cleanly when its context ends.
func TestNewBuildsThePartsOfItsRoles(t *testing.T) {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"HTTP_ADDR": "127.0.0.1:0", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		roles []Role
		parts []string
	}{
		{[]Role{Workers, HTTP}, []string{"http", "workers"}},
		{[]Role{Scheduler}, []string{"scheduler"}},
	} {
		p, err := New(context.Background(), Config{Config: cfg, Roles: tc.roles, Queues: []string{"terminal-t"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Parts(); !slices.Equal(got, tc.parts) {
			t.Errorf("%v: parts %v, want %v", tc.roles, got, tc.parts)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }() // owner: the test; ends with ctx
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: Run: %v", tc.roles, err)
		}
		_ = p.Close()
	}
}
