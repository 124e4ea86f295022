package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
)

// TestConnectFollowsASentinelFailover connects through a Sentinel URL,
// writes, has the sentinels promote the replica, and writes again: what was
// written before is on the new master, and the client moves its writes
// there. (Replication is asynchronous: until the client hears of the
// switch, a write may still reach the old master and be lost when it
// rejoins as a replica; the engine notices such a rollback by the run's
// version and redoes the steps, see internal/app's sentinel test.)
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
	promoted := redis.NewClient(&redis.Options{Addr: s.Replica.Addr})
	defer promoted.Close()
	if got, err := promoted.Get(ctx, "before").Result(); err != nil || got != "1" {
		t.Errorf("the promoted master has before = %q, %v; want 1", got, err)
	}
	// The client hears of the switch from its sentinel within moments; each
	// write is checked on the promoted master until one lands there.
	landed := false
	for i := 0; i < 200 && !landed; i++ {
		if err := conn.Client.Set(ctx, "after", i, 0).Err(); err != nil {
			continue // a connection to the old master closed under us
		}
		got, err := promoted.Get(ctx, "after").Int()
		landed = err == nil && got == i
	}
	if !landed {
		t.Error("the client never wrote to the promoted master")
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
