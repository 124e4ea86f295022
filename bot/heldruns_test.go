package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// roots are the request's root messages in the channel.
func (h *harness) roots() []string {
	var out []string
	for _, m := range h.fake.Messages(chanIn) {
		if m.ThreadTS == "" && !m.Ephemeral && strings.HasPrefix(m.Text, "Research request: ") {
			out = append(out, m.TS)
		}
	}
	return out
}

// TestE2EARequestWhoseRootAnswerWasLostStartsOnceInThatRoot: the root
// message of a /research lands but its answer is lost (as when the process
// is killed while Slack handles the post). The run was stored held before
// the post, so the request is not lost: once the starter's claim has
// expired, the sweep finishes its start, finds the root by its metadata
// instead of posting a second one, and the run goes on in its thread.
func TestE2EARequestWhoseRootAnswerWasLostStartsOnceInThatRoot(t *testing.T) {
	clock := quartz.NewMock(t)
	h := newClockHarness(t, clock)
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
	defer cancel()
	h.engine.mu.Lock()
	h.engine.keepIDs = true
	h.engine.mu.Unlock()
	loseAnswerOf(h.fake, "Research request: ")
	h.slash(requester, chanIn, "what is RAG?")
	h.waitFor("the person told the request starts in a moment", func() bool { return h.ephemeralTo(requester, "starts in its thread in a moment") })
	runs, err := h.engine.List(ctx, pipeline.RunFilter{})
	if err != nil || len(runs) != 1 || !runs[0].Held || runs[0].Status != pipeline.StatusInterrupted {
		t.Fatalf("after the lost root: runs %+v (%v), want one, held", runs, err)
	}
	if got := h.roots(); len(got) != 1 {
		t.Fatalf("%d root messages after the lost answer, want the one that landed", len(got))
	}
	id := runs[0].ID
	if n := len(h.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d posts before the sweep, want the root only", n)
	}
	// The starter's claim expires (as its TTL would, the process gone).
	if err := h.rdb.Del(ctx, "rb:slack:held:claim:"+id).Err(); err != nil {
		t.Fatal(err)
	}
	for elapsed := time.Duration(0); elapsed < heldClaimTTL+2*heldSweepEvery; {
		d, w := clock.AdvanceNext()
		w.MustWait(ctx)
		elapsed += d
	}
	h.waitFor("the plan checkpoint", func() bool { _, ok := h.withAction(blockkit.ActionApprove, "Research plan"); return ok })
	roots := h.roots()
	if len(roots) != 1 {
		t.Fatalf("%d root messages after the takeover, want 1:%s", len(roots), h.dump())
	}
	r, err := h.engine.Load(ctx, id)
	if err != nil || r.Held || r.Origin.ThreadTS != roots[0] {
		t.Fatalf("run %+v (%v): want it released in the root's thread %s", r, err, roots[0])
	}
	plan, _ := h.withAction(blockkit.ActionApprove, "Research plan")
	if plan.ThreadTS != roots[0] {
		t.Errorf("the plan is in thread %q, want the root's %q", plan.ThreadTS, roots[0])
	}
	if root := h.fake.Thread(chanIn, roots[0])[0]; !strings.Contains(raw(root), id) || root.Updated == 0 {
		t.Errorf("the root message was not found and updated naming run %s: %s", id, raw(root))
	}
	if n := len(h.fake.Calls("conversations.history")); n != 1 {
		t.Errorf("%d looks in the channel's history, want 1", n)
	}
	if !strings.Contains(h.logs.String(), "finishing its start") {
		t.Error("the takeover of the held run was not logged")
	}
}
