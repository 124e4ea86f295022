//go:build faults

package faults

import (
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/redisstore"
)

// leakGrace is how long the goroutines left after the suite may take to
// end before they count as leaked. go-redis probes a Redis it could not
// dial from a goroutine that sleeps 1 s between probes and notices that its
// pool was closed only when it wakes (internal/pool.(*ConnPool).tryDial);
// the faults that cut a client off from Redis leave one such prober behind
// for up to a second after the client is closed. goleak's own retries give
// up sooner than that. A goroutine still there after leakGrace is a leak.
const leakGrace = 5 * time.Second

// TestMain checks that no fault leaves a goroutine behind: workers,
// rescuers, leases, proxies and the bot all stop when their test ends.
// The Redis client's own complaints (a dial refused while a fault lasts)
// would drown the figures: they go where the program routes them, nowhere
// here.
func TestMain(m *testing.M) {
	redisstore.RouteRedisLogs(slog.New(slog.DiscardHandler))
	code := m.Run()
	if code == 0 {
		if err := leftGoroutines(leakGrace,
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			// bleve's analysis workers, started by its package init.
			goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leftGoroutines asks goleak for unexpected goroutines until there are none
// or grace has passed, and returns what it found last.
func leftGoroutines(grace time.Duration, opts ...goleak.Option) error {
	deadline := time.Now().Add(grace)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}
