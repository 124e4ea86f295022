package redisstore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that every goroutine the package starts (lease refreshers,
// queue workers, watchers, rescuers) has stopped when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
