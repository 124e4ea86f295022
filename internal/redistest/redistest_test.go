package redistest

import (
	"context"
	"testing"
)

func TestStartGivesAWorkingPrivateServer(t *testing.T) {
	_, a := Start(t)
	_, b := Start(t)
	ctx := context.Background()
	if err := a.Set(ctx, "k", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Get(ctx, "k").Result(); got != "" {
		t.Fatalf("servers are not private: b sees %q", got)
	}
	if got, _ := a.Get(ctx, "k").Result(); got != "a" {
		t.Fatalf("a.Get = %q, want a", got)
	}
}
