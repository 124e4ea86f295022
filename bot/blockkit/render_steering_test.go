package blockkit

import (
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

func TestGoldenSteering(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	note := pipeline.SteeringNote{Text: "Focus on Europe; skip vendor blogs", By: "U0REQ0001", At: at, Step: pipeline.StepSearch}
	hostile := pipeline.SteeringNote{Text: "Ping <!channel> and see <https://evil.example|this>\nsecond line", By: "U0REQ0001", At: at, Step: pipeline.StepFetch}
	run := &pipeline.Run{ID: "run-42", Question: "What is RAG?", RequestedBy: "U0REQ0001", Status: pipeline.StatusRunning, Step: pipeline.StepFetch,
		CreatedAt: at, Notes: []pipeline.SteeringNote{note, hostile}}
	cases := map[string]any{
		"steering_noted":         msg(RenderSteeringNoted(note, 1, false)),
		"steering_noted_waiting": msg(RenderSteeringNoted(note, 3, true)),
		"steering_not_allowed":   msg(SteeringNotAllowed(run)),
		"steering_too_long":      msg(SteeringTooLong(612)),
		"steering_too_many":      msg(SteeringTooMany()),
		"steering_too_fast":      msg(SteeringTooFast(3, "minute", "42 seconds")),
		"steering_empty":         msg(SteeringEmpty()),
		"steering_finished":      msg(SteeringFinished(run)),
		"progress_steered":       msg(RenderProgress(run, at.Add(time.Minute))),
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) { golden(t, name, v) })
	}
	for _, out := range []string{string(rawJSON(RenderSteeringNoted(hostile, 2, false))), string(rawJSON(RenderProgress(run, at)))} {
		for _, bad := range []string{"<!channel>", "<https://evil.example|"} {
			if strings.Contains(out, bad) {
				t.Errorf("a steering note shows %q unescaped:\n%s", bad, out)
			}
		}
	}
	if out := string(rawJSON(RenderProgress(&pipeline.Run{ID: "run-1", Status: pipeline.StatusRunning, Step: pipeline.StepSearch}, at))); strings.Contains(out, "Steering") {
		t.Errorf("a run without notes shows a steering line:\n%s", out)
	}
}
