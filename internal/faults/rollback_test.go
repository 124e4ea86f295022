//go:build faults

package faults

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
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

// approvePlan starts a guided run, lets before act while it waits at the
// plan review (a backup, a replica in sync), approves the plan and waits
// for the draft review. It returns the plan and draft messages.
func (w *slackWorld) approvePlan(before func()) (plan, draft slackfake.Message) {
	w.t.Helper()
	plan = w.planCheckpoint()
	planID := instanceOf(w.t, plan)
	runID, _, _ := strings.Cut(planID, ".")
	eventually(w.t, waitLimit, "the plan review shown", func() bool {
		r, err := w.worker.Engine.Load(context.Background(), runID)
		return err == nil && r.Offering == ""
	})
	before()
	if told := w.click(plan, 0); told != "" {
		w.t.Fatalf("approving the plan was answered %q", told)
	}
	eventually(w.t, waitLimit, "the plan decision", func() bool { return w.decided(planID) })
	draft = w.nextCheckpoint("the draft review", plan.TS)
	if strings.Contains(string(w.message(plan.TS).Blocks), `"`+blockkit.ActionApprove+`"`) {
		w.t.Fatal("the approved plan still shows its buttons")
	}
	return plan, draft
}

// lostPlanIsAskedAgain checks what people see once Redis has lost the plan
// approval (since back, when Redis answered again): the run is back at the
// plan review; it is posted again at the bottom of the thread with its
// buttons and a plain warning, within bound, and its earlier message says
// the decision shown there was lost; a click on the draft review of the lost
// future is answered truthfully and changes nothing; approving the plan
// again is applied once and the run goes on. It returns how long the plan
// review took to be offered again.
func (w *slackWorld) lostPlanIsAskedAgain(plan, draft slackfake.Message, back time.Time, bound time.Duration) time.Duration {
	t := w.t
	t.Helper()
	planID := instanceOf(t, plan)
	runID, _, _ := strings.Cut(planID, ".")
	// Read through a process that saw none of it, so that this read does
	// not itself find the loss: the bot's replicas must.
	fresh := w.replica(w.px.URL(), false)
	r, err := fresh.Engine.Load(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Waiting != planID || r.Instance(planID).Decision != nil {
		t.Fatalf("after the loss the run waits at %q (plan decision %+v): the approval was not lost", r.Waiting, r.Instance(planID).Decision)
	}

	again := w.nextCheckpoint("the plan review offered again", plan.TS, draft.TS)
	reoffered := time.Since(back)
	if reoffered > bound {
		t.Errorf("the plan review was offered again %s after Redis was back, want within %s", reoffered, bound)
	}
	// It is a new message at the bottom of the thread, saying the decision
	// was lost; the earlier message, which showed the approval, says so and
	// points to it.
	if b := string(again.Blocks); instanceOf(t, again) != planID || !strings.Contains(b, "was lost when the bot's storage was restored") || again.TS < draft.TS || again.ThreadTS != plan.ThreadTS {
		t.Fatalf("the checkpoint offered again (%s in thread %s, after the draft review %s) is not the plan review saying its decision was lost:\n%s", again.TS, again.ThreadTS, draft.TS, b)
	}
	eventually(t, waitLimit, "the plan review's earlier message saying its decision was lost", func() bool {
		b := string(w.message(plan.TS).Blocks)
		return strings.Contains(b, "the decision made here was lost") && strings.Contains(b, "new message below") && !strings.Contains(b, `"`+blockkit.ActionApprove+`"`)
	})

	told := w.click(draft, 10*time.Second)
	if !strings.Contains(told, "lost when the bot's storage was restored") || !strings.Contains(told, "is waiting at *Research plan* again") || !strings.Contains(told, "Nothing was changed") {
		t.Fatalf("a click on the lost draft review was told %q", told)
	}
	if r, err := fresh.Engine.Load(context.Background(), runID); err != nil || r.Waiting != planID {
		t.Fatalf("after the stale click the run waits at %q (%v), want the plan review", r.Waiting, err)
	}

	if told := w.click(w.message(again.TS), 0); told != "" {
		t.Fatalf("approving the plan again was answered %q", told)
	}
	eventually(t, waitLimit, "the plan decision after the loss", func() bool { return w.decided(planID) })
	w.nextCheckpoint("the draft review after the loss", plan.TS, draft.TS, again.TS)
	// Posted once: the stale click (another report of the same loss)
	// updated the message asking again rather than posting another.
	posted := 0
	for _, c := range w.fake.Calls("chat.postMessage") {
		if strings.Contains(c.Params["text"], "An earlier decision was lost") {
			posted++
		}
	}
	if posted != 1 {
		t.Errorf("the plan review was posted again %d times, want once", posted)
	}
	r, err = fresh.Engine.Load(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if n := countDecisions(r, checkpoints.PlanReview); n != 1 {
		t.Errorf("the plan review was decided %d times in the stored run, want once", n)
	}
	return reoffered
}

// TestRestoreFromAnOlderAOFOffersTheLostCheckpointAgain: a person approves
// the plan; Redis is then restored from a copy of its append-only files
// taken before the approval (an operator's restore, or a disk rolled back).
// The plan review is offered again in the thread, saying the decision was
// lost; the lost draft review's button says so; the plan is decided once.
func TestRestoreFromAnOlderAOFOffersTheLostCheckpointAgain(t *testing.T) {
	w := newSlackWorld(t, nil)
	var backup string
	plan, draft := w.approvePlan(func() { backup = w.rp.backupAOF() })
	w.rp.restoreAOF(backup)
	// The worker reads the versions of the runs it saw every half lease
	// (RUN_LEASE is 2 s here); its clients reconnect within a lease.
	took := w.lostPlanIsAskedAgain(plan, draft, time.Now(), takeover.at(w.settings()))
	within(t, "Redis restored from an AOF older than a plan approval (the lost draft review's click told it was lost, nothing changed; the plan decided once): the plan review offered again after Redis was back", took, takeover, w.settings())
}

// TestFailoverToALaggingReplicaOffersTheLostCheckpointAgain: a replica is
// in sync while the run waits at the plan review, then stops receiving
// (its link to the master is cut); the person approves the plan, and the
// master dies. The replica is promoted and the bot and the worker are
// moved to it (as Sentinel or a DNS switch would), without the approval.
// WAIT, asked after the approval, says no replica acknowledged it: the
// operator's way to know (and, with min-replicas-to-write, to refuse the
// write). The plan review is offered again, the lost draft review's button
// says so, and the plan is decided once.
func TestFailoverToALaggingReplicaOffersTheLostCheckpointAgain(t *testing.T) {
	ctx := context.Background()
	w := newSlackWorldBehind(t, nil, true)
	_, master := redistest.Connect(t, "redis://"+w.rp.Addr()+"/0")
	replicaSrv, replica := redistest.Start(t)
	link := newProxy(t, w.rp.Addr()) // the replica's link to the master
	host, port, err := net.SplitHostPort(link.p.Listen)
	if err != nil {
		t.Fatal(err)
	}
	if err := replica.ReplicaOf(ctx, host, port).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitLimit, "the replica in sync", func() bool {
		info, err := replica.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	})

	plan, draft := w.approvePlan(func() {
		n, err := master.Do(ctx, "WAIT", 1, 5000).Int64()
		if err != nil || n != 1 {
			t.Fatalf("WAIT before the cut: %d replicas (%v), want 1", n, err)
		}
		link.down() // the replica stops receiving: it lags from here on
	})
	acked, err := master.Do(ctx, "WAIT", 1, 200).Int64()
	if err != nil || acked != 0 {
		t.Fatalf("WAIT after the approval: %d replicas (%v), want 0: the replica was not lagging", acked, err)
	}

	// The master dies; the replica is promoted and everyone moves to it.
	w.rp.kill()
	if err := replica.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.px.p.Update(&toxiproxy.Proxy{Listen: w.px.p.Listen, Upstream: replicaSrv.Addr, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	took := w.lostPlanIsAskedAgain(plan, draft, time.Now(), takeover.at(w.settings()))
	t.Logf("WAIT 1 after the approval said %d replicas had it", acked)
	within(t, "failover to a replica that missed a plan approval (the lost draft review's click told it was lost; the plan decided once): the plan review offered again after the switch", took, takeover, w.settings())
}
