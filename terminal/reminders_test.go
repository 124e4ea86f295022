package terminal

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// A checkpoint whose reminders stopped says so, and how to decide or skip
// it, in its rendering and as a note when it happens; the label is cleaned.
func TestRemindersStoppedIsSaidWithHowToSkip(t *testing.T) {
	inst := checkpoints.Instance{ID: "r-1.cp1", RunID: "r-1", Label: "Budget\x1b[2J", ControlType: "budget", Required: true,
		State: checkpoints.StateTimedOut, Reminded: 3, RemindersStoppedAt: time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)}
	want := "the run is still waiting: decide here, or skip it with `researchbot checkpoints skip r-1 r-1.cp1`"
	if got := RenderCheckpoint(inst); !strings.Contains(got, "have stopped after 3") || !strings.Contains(got, want) || strings.Contains(got, "\x1b") {
		t.Fatalf("rendering %q does not say the reminders stopped", got)
	}
	var out bytes.Buffer
	if err := New(&out).RemindersStopped(context.Background(), &pipeline.Run{ID: "r-1"}, &inst); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "\x1b") {
		t.Fatalf("note %q", out.String())
	}
}
