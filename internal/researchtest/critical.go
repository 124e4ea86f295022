package researchtest

import (
	"strings"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// Latencies are the fixed latencies of the fakes in a benchmark.
type Latencies struct {
	LLM, Search, Fetch time.Duration
}

// CriticalPath is the shortest time an auto run could have taken given the
// calls it actually made, each at the fakes' latency: its model calls one
// after another (each needs the one before), each search round as one
// search (its queries in parallel), and each fetch round as a robots.txt
// then a page (the pages of a round in parallel; a robots.txt is read
// before its host's first page). It assumes no Redis, no CPU time and
// unbounded parallelism within a step: what the engine adds is measured
// against it.
func CriticalPath(r *pipeline.Run, l Latencies) time.Duration {
	searches, fetches := 0, 0
	for _, e := range r.Trace {
		switch {
		case e.Step == pipeline.StepSearch && (strings.HasPrefix(e.Message, "search round") || strings.HasPrefix(e.Message, "reformulated searches")):
			searches++
		case e.Step == pipeline.StepFetch && strings.HasPrefix(e.Message, "read "):
			fetches++
		}
	}
	return time.Duration(r.Spend.LLMCalls)*l.LLM + time.Duration(searches)*l.Search + time.Duration(fetches)*2*l.Fetch
}
