package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// lockedBuffer is a strings.Builder safe for the follower and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAPromptAnsweredElsewhereIsWithdrawn: while the terminal waits for an
// answer to the plan, someone decides it elsewhere (Slack, another
// terminal); the prompt is withdrawn at once, the terminal says so and goes
// on to the next checkpoint instead of blocking the run with a stale one.
func TestAPromptAnsweredElsewhereIsWithdrawn(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	ctx := context.Background()
	var out lockedBuffer
	errb := &lockedBuffer{}
	here := assemble(t, w.env(nil), app.Options{Presenters: map[string]pipeline.Presenter{"terminal": terminal.New(errb)}})
	stop, err := here.StartWorker([]string{"terminal-stale"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r, err := here.Engine.Start(ctx, pipeline.Request{Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided,
		RequestedBy: "terminal", Origin: pipeline.Origin{Kind: "terminal", Queue: "terminal-stale"}})
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	typed, typing := io.Pipe() // the person types nothing until the draft
	defer typing.Close()
	pr := terminal.NewPrompter(typed, errb)
	done := make(chan error, 1)
	go func() {
		done <- follow(fctx, here.Engine, here.Store.Watch(fctx, r.ID, 0), terminal.NewFollower(errb, nil), pr, nil, r.ID, true, "", terminal.Style{}, &out, errb)
	}()
	var plan string
	for deadline := time.Now().Add(30 * time.Second); plan == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the plan was never asked:\n%s", errb.String())
		}
		if strings.Contains(errb.String(), "[a]pprove") {
			got, err := here.Engine.Load(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			plan = got.Current().ID
		}
	}
	if _, err := here.Engine.Decide(ctx, plan, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errb.String(), "━━ Draft review"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal did not go on past the plan decided elsewhere:\n%s", errb.String())
		}
	}
	fmt.Fprintln(typing, "a") // the draft, answered here
	if err := <-done; err != nil {
		t.Fatalf("follow: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"(Research plan was settled without you; going on)", "✓ Research plan: approve by U1"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("the terminal did not show %q:\n%s", want, errb.String())
		}
	}
	if !strings.Contains(out.String(), "# Heat pumps in cold climates") {
		t.Errorf("no report:\n%s", out.String())
	}
}
