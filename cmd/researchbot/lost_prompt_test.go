package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// TestTheTerminalWarnsWhenALostDecisionIsAskedAgain: the plan is approved
// at the terminal and the draft review asked; then Redis loses the run's
// writes since the plan review was shown (its hash is put back as it was)
// and the loss is reported. The draft prompt is withdrawn saying it was
// lost, a warning line says the earlier decision was lost and must be made
// again, the plan is asked again, and the run goes on once it is answered.
func TestTheTerminalWarnsWhenALostDecisionIsAskedAgain(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	ctx := context.Background()
	var out lockedBuffer
	errb := &lockedBuffer{}
	here := assemble(t, w.env(nil), app.Options{Presenters: map[string]pipeline.Presenter{"terminal": terminal.New(errb)}})
	stop, err := here.StartWorker([]string{"terminal-lost"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r, err := here.Engine.Start(ctx, pipeline.Request{Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided,
		RequestedBy: "terminal", Origin: pipeline.Origin{Kind: "terminal", Queue: "terminal-lost"}})
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	typed, typing := io.Pipe()
	defer typing.Close()
	pr := terminal.NewPrompter(typed, errb)
	done := make(chan error, 1)
	go func() { // owner: this test; it ends with the run or fctx
		done <- follow(fctx, here.Engine, here.Store.Watch(fctx, r.ID, 0), terminal.NewFollower(errb, nil), pr, nil, r.ID, true, "", terminal.Style{}, &out, errb)
	}()
	// waitFor polls what the terminal printed (a real process's output:
	// no clock to drive), generously bounded.
	waitFor := func(what string, ok func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(errb.String()); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s:\n%s", what, errb.String())
			}
		}
	}
	waitFor("the plan was never asked", func(s string) bool { return strings.Contains(s, "━━ Research plan") })
	waitFor("the plan was never saved as shown", func(string) bool {
		got, err := here.Engine.Load(ctx, r.ID)
		return err == nil && got.Current() != nil && got.Offering == ""
	})
	rdb := here.Conn.Client
	before, err := rdb.Dump(ctx, "rb:run:"+r.ID).Result()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(typing, "a") // the plan, approved here
	waitFor("the draft review was never asked", func(s string) bool { return strings.Contains(s, "━━ Draft review") })

	if err := rdb.RestoreReplace(ctx, "rb:run:"+r.ID, 0, before).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := here.Engine.OfferLostAgain(ctx, r.ID, "test: the stored version went back"); err != nil {
		t.Fatal(err)
	}
	waitFor("no warning that the plan decision was lost", func(s string) bool {
		return strings.Contains(s, `⚠ An earlier decision on "Research plan" was lost when the run's storage was restored`)
	})
	waitFor("the plan was not asked again", func(s string) bool { return strings.Count(s, "━━ Research plan") == 2 })
	if s := errb.String(); !strings.Contains(s, "(Draft review was lost with the run's storage") || strings.Contains(s, "Draft review was settled without you") {
		t.Errorf("the withdrawn draft prompt was not said to be lost:\n%s", s)
	}
	fmt.Fprintln(typing, "a") // the plan again
	waitFor("the draft review was not asked after the plan again", func(s string) bool { return strings.Count(s, "━━ Draft review") == 2 })
	fmt.Fprintln(typing, "a") // the draft
	if err := <-done; err != nil {
		t.Fatalf("follow: %v\n%s", err, errb.String())
	}
	if n := strings.Count(errb.String(), "⚠ An earlier decision"); n != 1 {
		t.Errorf("%d warnings of the lost decision, want 1:\n%s", n, errb.String())
	}
	if !strings.Contains(out.String(), "# Heat pumps in cold climates") {
		t.Errorf("no report:\n%s", out.String())
	}
}
