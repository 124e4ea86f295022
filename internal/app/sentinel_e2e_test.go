package app

import (
	"context"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestRunSurvivesASentinelFailover runs researchbot on a Redis watched by
// three sentinels (REDIS_URL in the Sentinel form) and has them promote the
// replica while the run waits for its analysis: the run carries on against
// the new master and finishes complete, every citation on a page it read.
//
// Replication is asynchronous: the old master may acknowledge a few writes
// after the replica was promoted and before the client hears of the switch,
// and those are gone once it rejoins as a replica. The store sees the
// run's version go back and the engine does those steps again, so at
// worst a step after the switch is paid twice; the run loses nothing.
func TestRunSurvivesASentinelFailover(t *testing.T) {
	s := redistest.StartSentinel(t)
	failedOver := make(chan error, 1)
	res := &researchtest.Researcher{Before: func(schema string, n int) *llmtest.Reply {
		if schema == "analysis" && n == 1 {
			failedOver <- s.Failover(context.Background())
		}
		return nil
	}}
	h := newHarnessAt(t, s.URL, res, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if err := <-failedOver; err != nil {
		t.Fatalf("failover: %v", err)
	}
	if m, err := s.CurrentMaster(t.Context()); err != nil || m != s.Replica.Addr {
		t.Fatalf("master after the run = %s (%v), want the promoted replica %s", m, err, s.Replica.Addr)
	}
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s %s)", r.Status, r.FallbackReason, r.Failure)
	}
	assertCitationsFetched(t, r)
	if len(r.Pages) == 0 || len(r.Report.References) == 0 {
		t.Fatalf("%d pages, %d references after the failover", len(r.Pages), len(r.Report.References))
	}
	if n := res.Count("research_plan"); n != 1 {
		t.Errorf("planned %d times: the plan, saved and replicated before the failover, was lost", n)
	}
	if h.web.Searches() != 5 {
		t.Errorf("%d searches, want 5: the searches recorded before the failover were lost", h.web.Searches())
	}
	for _, schema := range []string{"analysis", "research_draft", "critique"} {
		if n := res.Count(schema); n < 1 || n > 2 {
			t.Errorf("%s called %d times, want once, or twice when the switch rolled it back", schema, n)
		}
	}
	// The finished run is what the new master holds.
	saved, err := h.app.Store.Load(t.Context(), r.ID)
	if err != nil || saved.Status != pipeline.StatusCompleted || len(saved.Pages) != len(r.Pages) {
		t.Fatalf("the new master holds %v (%v)", saved, err)
	}
}
