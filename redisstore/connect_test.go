package redisstore

import (
	"strconv"
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

// TestAPipelineRunsOnTheCommandsConnection: a process's first pipeline,
// after a command, runs on the connection the command opened: go-redis's
// separate pipeline pool would open another, and every new connection is
// a HELLO.
func TestAPipelineRunsOnTheCommandsConnection(t *testing.T) {
	srv, rdb := redistest.Start(t)
	ctx := t.Context()
	before := helloCalls(t, rdb)
	conn, err := Connect(ctx, srv.URL, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Client.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "k")
		p.Set(ctx, "k2", "v", time.Minute)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := helloCalls(t, rdb) - before; n != 1 {
		t.Errorf("a command and a pipeline opened %d connections (HELLOs), want 1", n)
	}
}

// helloCalls is how many HELLOs the server has answered (INFO commandstats).
func helloCalls(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_hello:calls="); ok {
			n, _, _ := strings.Cut(rest, ",")
			calls, err := strconv.Atoi(n)
			if err != nil {
				t.Fatal(err)
			}
			return calls
		}
	}
	return 0
}
