package bot

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that every goroutine the package starts (socket mode
// loop, workers, ack guards, progress timers, health server) has stopped
// when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// bleve's analysis workers (the document collection, linked in
		// through internal/app), started by its package init.
		goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"))
}
