package tracing

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind (the
// batch span processor's, an exporter's connections).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
