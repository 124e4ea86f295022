package scheduler

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the scheduler's loops (Service.Run) and the digest
// presenter leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
