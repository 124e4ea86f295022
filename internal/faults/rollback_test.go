//go:build faults

package faults

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// aofDir is where redis-server 7 keeps its append-only files (under --dir).
const aofDir = "appendonlydir"

// backupAOF copies the server's append-only files aside, as an operator's
// backup would, and returns where.
func (p *redisProc) backupAOF() string {
	p.t.Helper()
	dst := filepath.Join(p.t.TempDir(), aofDir)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(p.dir, aofDir))); err != nil {
		p.t.Fatalf("back up the append-only files: %v", err)
	}
	return dst
}

// restoreAOF stops the server, puts the backup in place of its
// append-only files, and starts it again: Redis loses every write made
// after the backup.
func (p *redisProc) restoreAOF(backup string) {
	p.t.Helper()
	p.kill()
	live := filepath.Join(p.dir, aofDir)
	if err := os.RemoveAll(live); err != nil {
		p.t.Fatal(err)
	}
	if err := os.CopyFS(live, os.DirFS(backup)); err != nil {
		p.t.Fatalf("restore the append-only files: %v", err)
	}
	p.start()
}

// message returns the channel's message with timestamp ts.
func (w *slackWorld) message(ts string) slackfake.Message {
	for _, m := range w.fake.Messages(channel) {
		if m.TS == ts && !m.Ephemeral {
			return m
		}
	}
	w.t.Fatalf("no message %s", ts)
	return slackfake.Message{}
}

// nextCheckpoint waits for a checkpoint message with an Approve button
// other than those posted at the given timestamps.
func (w *slackWorld) nextCheckpoint(what string, not ...string) slackfake.Message {
	w.t.Helper()
	var m slackfake.Message
	eventually(w.t, waitLimit, what, func() bool {
		for _, x := range w.fake.Messages(channel) {
			if !x.Ephemeral && !containsString(not, x.TS) && strings.Contains(string(x.Blocks), `"`+blockkit.ActionApprove+`"`) {
				m = x
				return true
			}
		}
		return false
	})
	return m
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// click clicks Approve on message m and returns what the clicker was told,
// the ephemeral answers' blocks as Slack shows them (waiting up to wait for
// an answer; "" when told nothing).
func (w *slackWorld) click(m slackfake.Message, wait time.Duration) string {
	w.t.Helper()
	before := len(w.fake.Messages(channel))
	w.clickAndJudge(m, "", wait)
	var out []string
	for _, x := range w.fake.Messages(channel)[before:] {
		if x.Ephemeral && x.ToUser == user {
			out = append(out, string(x.Blocks))
		}
	}
	return strings.Join(out, " | ")
}

// TestRestoreFromAnOlderAOFOffersTheLostCheckpointAgain: a person approves
// the plan; Redis is then restored from a copy of its append-only files
// taken before the approval (an operator's restore, or a disk rolled back).
// The run is back at the plan review: the plan message in the thread shows
// its buttons again with a plain warning that the earlier decision was lost;
// a click on the draft review of the lost future is answered truthfully
// (lost, where to decide, nothing changed); approving the plan again is
// applied once and the run goes on.
func TestRestoreFromAnOlderAOFOffersTheLostCheckpointAgain(t *testing.T) {
	w := newSlackWorld(t, nil)
	plan := w.planCheckpoint()
	planID := instanceOf(t, plan)
	runID, _, _ := strings.Cut(planID, ".")
	backup := w.rp.backupAOF()

	if told := w.click(plan, 0); told != "" {
		t.Fatalf("approving the plan was answered %q", told)
	}
	eventually(t, waitLimit, "the plan decision", func() bool { return w.decided(planID) })
	draft := w.nextCheckpoint("the draft review", plan.TS)
	if strings.Contains(string(w.message(plan.TS).Blocks), `"`+blockkit.ActionApprove+`"`) {
		t.Fatal("the approved plan still shows its buttons before the restore")
	}

	w.rp.restoreAOF(backup)
	restored := time.Now()
	// Read through a process that saw none of it, so that this read does
	// not itself find the loss: the bot's replicas must.
	r, err := w.replica(w.redis, false).Engine.Load(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Waiting != planID || r.Instance(planID).Decision != nil {
		t.Fatalf("after the restore the run waits at %q (plan decision %+v): the restore did not roll the approval back", r.Waiting, r.Instance(planID).Decision)
	}

	// The plan review is offered again, in its thread, saying why.
	eventually(t, waitLimit, "the plan review offered again", func() bool {
		b := string(w.message(plan.TS).Blocks)
		return strings.Contains(b, "was lost when the bot's storage was restored") && strings.Contains(b, `"`+blockkit.ActionApprove+`"`)
	})
	reoffered := time.Since(restored)
	// The worker reads the versions of the runs it saw every half lease
	// (RUN_LEASE is 2 s here).
	if bound := 2 * time.Second; reoffered > bound {
		t.Errorf("the plan review was offered again %s after Redis was back, want within %s", reoffered, bound)
	}

	// A button of the lost future is answered truthfully and changes nothing.
	told := w.click(draft, 10*time.Second)
	if !strings.Contains(told, "lost when the bot's storage was restored") || !strings.Contains(told, "Nothing was changed") {
		t.Fatalf("a click on the lost draft review was told %q", told)
	}
	if r, err := w.worker.Engine.Load(context.Background(), runID); err != nil || r.Waiting != planID {
		t.Fatalf("after the stale click the run waits at %q (%v), want the plan review", r.Waiting, err)
	}

	// Deciding again is applied once, and the run goes on.
	if told := w.click(w.message(plan.TS), 0); told != "" {
		t.Fatalf("approving the plan again was answered %q", told)
	}
	eventually(t, waitLimit, "the plan decision after the restore", func() bool { return w.decided(planID) })
	w.nextCheckpoint("the draft review after the restore", plan.TS, draft.TS)
	r, err = w.worker.Engine.Load(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if n := countDecisions(r, checkpoints.PlanReview); n != 1 {
		t.Errorf("the plan review was decided %d times in the stored run, want once", n)
	}
	figure(t, "Redis restored from an AOF older than a plan approval (RUN_LEASE=2s): the plan review offered again %s after Redis was back (bound 2 s); a click on the lost draft review was answered that it was lost, nothing changed",
		reoffered.Round(10*time.Millisecond))
}
