package main

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

func TestFormatVerdicts(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	runs := []*pipeline.Run{
		{ID: "r-1", Question: "heat pumps?", Verdicts: []pipeline.Verdict{
			{By: "U1", Useful: true, At: at},
			{By: "U2", Useful: false, Reason: "missed\x1b[2J the\n2025 trials", At: at},
			{By: "U1", Useful: false, On: "r-1.f1", Reason: "ignored [2]", At: at},
		}},
		{ID: "r-2", Question: "no verdicts"},
	}
	got := formatVerdicts(runs)
	want := "r-1  useful 1  not useful 1  heat pumps?\n" +
		"  2026-03-14 09:00 useful     U1\n" +
		"  2026-03-14 09:00 not useful U2: missed the 2025 trials\n" +
		"  2026-03-14 09:00 not useful U1 on answer r-1.f1: ignored [2]"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "r-2") {
		t.Error("a run without verdicts is listed")
	}
	if formatVerdicts(runs[1:]) != "no feedback on these runs yet" {
		t.Error("no verdicts: no notice")
	}
}
