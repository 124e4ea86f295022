package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// A held run (stored before its request's root message was shown) is stored
// interrupted so no worker takes it; people are told it is starting.
func TestAHeldRunIsShownAsStarting(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	held := &pipeline.Run{ID: "r-1", Question: "Heat pumps?", Status: pipeline.StatusInterrupted, Held: true, CreatedAt: now}
	for name, blocks := range map[string]any{
		"list":   RenderList([]*pipeline.Run{held}, now),
		"status": RenderStatus(held, now),
		"home":   homeRuns([]*pipeline.Run{held}, now),
	} {
		b, err := json.Marshal(blocks)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, "starting") || strings.Contains(s, "interrupted") {
			t.Errorf("%s: a held run is shown as %s, want starting and never interrupted", name, s)
		}
	}
	if got := (&pipeline.Run{Status: pipeline.StatusInterrupted}).ShownStatus(); got != pipeline.StatusInterrupted {
		t.Errorf("a run that is not held: shown %q, want interrupted", got)
	}
}
