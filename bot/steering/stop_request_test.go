package steering_test

import (
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestStopRequests: a message that asks to stop the run is the cancel flow
// (pipeline.IsStopRequest, which steering and clarify ask); one that steers
// what to stop doing is a note.
func TestStopRequests(t *testing.T) {
	for text, want := range map[string]bool{
		"stop": true, "Stop!": true, "please cancel": true, "cancel this run": true, "abort the research": true,
		"stop it now": true, "STOP RIGHT NOW.": true, "halt": true, "kill it": true, "cancel that please": true,
		"stop including vendor blogs": false, "don't stop at 2020": false, "cancel culture in Europe": false,
		"focus on Europe": false, "": false, "stopping distance of heat pumps": false, "abort the search for US data and focus on Europe": false,
	} {
		if got := pipeline.IsStopRequest(text); got != want {
			t.Errorf("IsStopRequest(%q) = %v, want %v", text, got, want)
		}
	}
}
