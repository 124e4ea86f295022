package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
)

// TestConnectFollowsASentinelFailover connects through a Sentinel URL,
// writes, has the sentinels promote the replica, and writes and reads
// again: the client follows the new master and nothing written is lost.
func TestConnectFollowsASentinelFailover(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx := t.Context()
	conn, err := Connect(ctx, s.URL, ConnOptions{Lease: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Client.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.Client.Set(ctx, "after", "2", 0).Err(); err != nil {
		t.Fatalf("write after the failover: %v", err)
	}
	for k, want := range map[string]string{"before": "1", "after": "2"} {
		if got, err := conn.Client.Get(ctx, k).Result(); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", k, got, err, want)
		}
	}
	if m, err := s.CurrentMaster(ctx); err != nil || m != s.Replica.Addr {
		t.Errorf("master after failover = %s (%v), want the replica %s", m, err, s.Replica.Addr)
	}
}

// TestConnectSentinelErrorsSayWhat: an unreachable sentinel set and an
// unknown master name are reported as such.
func TestConnectSentinelErrorsSayWhat(t *testing.T) {
	if _, err := Connect(t.Context(), "redis://127.0.0.1:1/0?master_name=m", ConnOptions{}); err == nil || !strings.Contains(err.Error(), "sentinel") {
		t.Errorf("unreachable sentinels: %v", err)
	}
	if _, err := Connect(t.Context(), "redis://127.0.0.1:1/0?master_name=m&bogus=1", ConnOptions{}); err == nil || !strings.Contains(err.Error(), "Sentinel URL") {
		t.Errorf("bad option: %v", err)
	}
}
