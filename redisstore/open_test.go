package redisstore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOpenHandsOutEveryStoreUnderOnePrefix: the stores Open hands out write
// their keys under its prefix, the ports under DefaultPrefix's fixed keys,
// and an empty prefix is DefaultPrefix.
func TestOpenHandsOutEveryStoreUnderOnePrefix(t *testing.T) {
	ctx := context.Background()
	conn, err := Connect(ctx, "", ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := Open(conn, "").Prefix(); got != DefaultPrefix || DefaultPrefix != "rb:" {
		t.Errorf("Open(conn, \"\").Prefix() = %q, DefaultPrefix %q; want rb:", got, DefaultPrefix)
	}
	db := Open(conn, "t:")
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := db.Store(StoreOptions{Prefix: "ignored:"}).Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	_, lease, err := db.Locker(time.Minute).Lock(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if err := db.ChannelDefaults().Put(ctx, "C1", map[string]string{"mode": "auto"}); err != nil {
		t.Fatal(err)
	}
	if wait, err := db.RateLimiter("test").Allow(ctx, "k", 1, time.Minute); err != nil || wait != 0 {
		t.Fatalf("Allow: %v %v", wait, err)
	}
	keys, err := conn.Client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var stores, ports int
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "t:"):
			stores++
		case strings.HasPrefix(k, DefaultPrefix+"rate:"):
			ports++
		default:
			t.Errorf("key %q is under neither the DB's prefix nor a port's", k)
		}
	}
	for _, want := range []string{"t:run:r-1", "t:lock:run:r-1", "t:chandefaults:C1"} {
		if !slices.Contains(keys, want) {
			t.Errorf("no key %s in %v", want, keys)
		}
	}
	if stores < 3 || ports == 0 {
		t.Errorf("%d keys under t:, %d under %srate:, want at least 3 and 1: %v", stores, ports, DefaultPrefix, keys)
	}
}
