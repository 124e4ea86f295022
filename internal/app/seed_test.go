package app

import (
	"context"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
)

// TestNewWritesTheBuiltinDefinitions: the App Home and the CLI see the
// built-in checkpoints from the first start, before any run; a later start
// keeps an admin's edit of one.
func TestNewWritesTheBuiltinDefinitions(t *testing.T) {
	ctx := context.Background()
	srv, _ := redistest.Start(t)
	cfg := testConfig(t, srv.URL, "http://127.0.0.1:1", "http://127.0.0.1:1", nil)
	open := func() *App {
		a, err := New(ctx, cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Close() })
		return a
	}
	a := open()
	defs, err := a.Store.Definitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != len(checkpoints.Builtins(a.opts.Clock.Now())) {
		t.Fatalf("after the first start: %d definitions, want the %d built-ins", len(defs), len(checkpoints.Builtins(a.opts.Clock.Now())))
	}
	d, err := a.Store.Definition(ctx, checkpoints.PlanReview)
	if err != nil {
		t.Fatal(err)
	}
	d.Label, d.Enabled = "Our plan review", false
	if err := a.Store.PutDefinition(ctx, d); err != nil {
		t.Fatal(err)
	}
	b := open()
	got, err := b.Store.Definition(ctx, checkpoints.PlanReview)
	if err != nil {
		t.Fatal(err)
	}
	if got.Label != "Our plan review" || got.Enabled {
		t.Fatalf("a second start changed the admin's edit: label %q, enabled %v", got.Label, got.Enabled)
	}
}
