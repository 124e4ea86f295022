//go:build faults

package faults

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no fault leaves a goroutine behind: workers,
// rescuers, leases, proxies and the bot all stop when their test ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
