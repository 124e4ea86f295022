package fetch

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind
// (transport connections, test servers, fetch goroutines).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
