package bot

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that every goroutine the package starts (socket mode
// loop, workers, ack guards, progress timers, health server) has stopped
// when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
