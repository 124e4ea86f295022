//go:build faults

package faults

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/redisstore"
)

// TestMain checks that no fault leaves a goroutine behind: workers,
// rescuers, leases, proxies and the bot all stop when their test ends.
// The Redis client's own complaints (a dial refused while a fault lasts)
// would drown the figures: they go where the program routes them, nowhere
// here.
func TestMain(m *testing.M) {
	redisstore.RouteRedisLogs(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
