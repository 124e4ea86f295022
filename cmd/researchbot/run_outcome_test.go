package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/researchtest"
)

// childExitCode is the child's exit status (0 when err is nil).
func childExitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("child: %v", err)
	return -1
}

// TestRunWithNoSearchResultsExitsNonZero: with the search backend down a
// run cannot read anything; it says why on stderr and exits 1, not 0 with
// the cause only inside an empty report.
func TestRunWithNoSearchResultsExitsNonZero(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.startWith(t, []string{"SEARXNG_URL=http://" + closedAddr(t)}, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	if code := childExitCode(t, c.wait(t)); code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, c.log())
	}
	log := c.log()
	if !strings.Contains(log, "read no sources") || !strings.Contains(log, "SEARXNG_URL") {
		t.Errorf("stderr does not say why:\n%s", log)
	}
	if testing.Verbose() {
		t.Log(log)
	}
}

// TestGuidedRunWithoutATerminalSaysWhatToDo: stdin that ends before the
// plan is answered stops the run with exit 3 and points at --mode auto.
func TestGuidedRunWithoutATerminalSaysWhatToDo(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.start(t, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	_ = c.stdin.Close()
	if code := childExitCode(t, c.wait(t)); code != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, c.log())
	}
	log := c.log()
	if !strings.Contains(log, "--mode auto") || !strings.Contains(log, "researchbot run --resume r-") {
		t.Errorf("stderr:\n%s", log)
	}
}
