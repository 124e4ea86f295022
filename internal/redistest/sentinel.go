package redistest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the sentinels of StartSentinel monitor.
const MasterName = "researchbot"

// Sentinel is a replicated Redis watched by three sentinels, all real
// redis-server processes on loopback, stopped when the test ends.
type Sentinel struct {
	// Master and Replica are the data servers as started; after Failover
	// the replica is the master.
	Master, Replica *Server
	// Sentinels are the three sentinels.
	Sentinels []*Server
	// URL is the Sentinel form of REDIS_URL for this set (go-redis's
	// failover URL: the first sentinel as host, the others as addr
	// parameters, the master's name as master_name).
	URL string
	// client talks to the first sentinel.
	client *redis.SentinelClient
}

// The sentinels' settings: a master that has not answered for DownAfter is
// down (with a quorum of two), and a failover attempt is given up after
// FailoverTimeout.
const (
	DownAfter       = time.Second
	FailoverTimeout = 10 * time.Second
)

// sentinelReady is what a sentinel logs once it has found the master's
// replica (it can then promote it).
const sentinelReady = "+slave slave"

// replicaReady is what a replica logs once it holds the master's data.
const replicaReady = "MASTER <-> REPLICA sync: Finished with success"

// StartSentinel starts a master, one replica in sync with it and three
// sentinels monitoring the master with a quorum of two.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server not found on PATH (apt-get install redis-server): %v", err)
	}
	master, _ := Start(t)
	mhost, mport, _ := net.SplitHostPort(master.Addr)
	replica, _ := startProcess(t, bin, replicaReady, func(int) []string {
		return []string{"--replicaof", mhost, mport}
	})
	s := &Sentinel{Master: master, Replica: replica}
	for i := range 3 {
		conf := filepath.Join(t.TempDir(), fmt.Sprintf("sentinel-%d.conf", i))
		// A sentinel rewrites its configuration file: it must be its own.
		body := fmt.Sprintf("sentinel monitor %s %s %s 2\n"+
			"sentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s %d\n", MasterName, mhost, mport,
			MasterName, DownAfter.Milliseconds(), MasterName, FailoverTimeout.Milliseconds())
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatalf("redistest: %v", err)
		}
		sent, _ := startProcess(t, bin, sentinelReady, func(int) []string { return []string{conf, "--sentinel"} })
		s.Sentinels = append(s.Sentinels, sent)
	}
	q := url.Values{"master_name": {MasterName}}
	for _, other := range s.Sentinels[1:] {
		q.Add("addr", other.Addr)
	}
	s.URL = "redis://" + s.Sentinels[0].Addr + "/0?" + q.Encode()
	s.client = redis.NewSentinelClient(&redis.Options{Addr: s.Sentinels[0].Addr})
	t.Cleanup(func() { _ = s.client.Close() })
	return s
}

// Failover makes the sentinels promote the replica (SENTINEL FAILOVER) and
// returns once every sentinel announces the new master (+switch-master;
// the others learn it from the first within a few seconds), so a client,
// whichever sentinel it listens to, is being told. It first waits until
// the replica has every write the master acknowledged (WAIT), as a
// graceful switch-over would: this is about staying up, not about
// asynchronous replication's window.
func (s *Sentinel) Failover(ctx context.Context) error {
	m := redis.NewClient(&redis.Options{Addr: s.Master.Addr})
	defer m.Close()
	if n, err := m.Wait(ctx, 1, 5*time.Second).Result(); err != nil {
		return fmt.Errorf("wait for the replica before the failover: %w", err)
	} else if n < 1 {
		return errors.New("the replica did not catch up with the master before the failover")
	}
	var subs []*redis.PubSub
	for _, sent := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sent.Addr})
		defer c.Close()
		sub := c.Subscribe(ctx, "+switch-master")
		defer sub.Close()
		if _, err := sub.Receive(ctx); err != nil { // the subscription is confirmed
			return err
		}
		subs = append(subs, sub)
	}
	if err := s.requestFailover(ctx); err != nil {
		return err
	}
	for _, sub := range subs {
		if err := s.awaitSwitch(ctx, sub); err != nil {
			return err
		}
	}
	return nil
}

// awaitSwitch waits for sub's sentinel to announce the replica as master.
func (s *Sentinel) awaitSwitch(ctx context.Context, sub *redis.PubSub) error {
	for {
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil {
			return fmt.Errorf("no +switch-master: %w", err)
		}
		// "<name> <old ip> <old port> <new ip> <new port>"
		f := strings.Fields(msg.Payload)
		if len(f) == 5 && f[0] == MasterName && net.JoinHostPort(f[3], f[4]) == s.Replica.Addr {
			return nil
		}
	}
}

// CurrentMaster asks every sentinel which server is the master now and
// answers with the newest configuration (the highest config epoch): after
// a failover led by one sentinel, the others learn of it only from its
// next hello (every 2 s). While a sentinel is still failing the master
// over (the replica promoted, the switch not yet announced: a client may
// already be writing to the promoted replica), it waits for the switch,
// up to FailoverTimeout.
func (s *Sentinel) CurrentMaster(ctx context.Context) (string, error) {
	deadline := time.Now().Add(FailoverTimeout)
	for {
		addr, busy, err := s.currentMaster(ctx)
		if err != nil || !busy || time.Now().After(deadline) {
			return addr, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// currentMaster is one look at every sentinel: the master of the highest
// config epoch, and whether a failover is in progress.
func (s *Sentinel) currentMaster(ctx context.Context) (addr string, busy bool, err error) {
	epoch := int64(-1)
	var firstErr error
	for _, sn := range s.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr})
		m, err := c.Master(ctx, MasterName).Result()
		_ = c.Close()
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		busy = busy || strings.Contains(m["flags"], "failover_in_progress")
		if e, _ := strconv.ParseInt(m["config-epoch"], 10, 64); e > epoch {
			addr, epoch = net.JoinHostPort(m["ip"], m["port"]), e
		}
	}
	if addr == "" {
		return "", false, firstErr
	}
	return addr, busy, nil
}

// requestFailover asks a sentinel to fail the master over. A sentinel
// learns of the replica and its link from the INFO it polls, so just after
// start-up it may answer NOGOODSLAVE; the request is repeated until it has
// seen a suitable replica, for at most 30 s.
func (s *Sentinel) requestFailover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := s.client.Failover(ctx, MasterName).Err()
		if err == nil || !strings.Contains(err.Error(), "NOGOODSLAVE") {
			if err != nil {
				return fmt.Errorf("SENTINEL FAILOVER: %w", err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("SENTINEL FAILOVER: no replica the sentinels would promote within 30 s: %w", err)
		case <-tick.C:
		}
	}
}
