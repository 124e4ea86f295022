package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
)

// TestPipedInputDoesNotSteer: with stdin a pipe, nothing typed while the
// run works is read: no hint, no note, no cancel question; the run ends
// with its report as before.
func TestPipedInputDoesNotSteer(t *testing.T) {
	analysing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var prompts []string
	res := &researchtest.Researcher{Seen: func(c llmtest.Call) {
		switch c.SchemaName {
		case "analysis":
			once.Do(func() { close(analysing) })
			<-release
		case "research_draft":
			mu.Lock()
			prompts = append(prompts, c.System+"\n"+c.User)
			mu.Unlock()
		}
	}}
	w := newWorld(t, res)
	c := w.start(t, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	<-analysing
	if _, err := c.stdin.Write([]byte("focus on Europe\nstop\n")); err != nil {
		t.Fatal(err)
	}
	close(release)
	if code := childExitCode(t, c.wait(t)); code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, c.log())
	}
	if log := c.log(); strings.Contains(log, "steer") || strings.Contains(log, "noted:") || strings.Contains(log, "Cancel run") {
		t.Errorf("piped input was read as steering:\n%s", log)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range prompts {
		if strings.Contains(p, "requester_note") {
			t.Errorf("a writer's prompt carries a note from piped input:\n%s", p)
		}
	}
}
