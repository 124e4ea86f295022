package bot

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// repeated is how many deliveries of kind the bot dropped as repeated.
func (h *harness) repeated(kind string) float64 {
	return testutil.ToFloat64(h.app.guardMetrics.duplicates.WithLabelValues(kind))
}

// refused is how many requests of kind the bot refused as foreign.
func (h *harness) refused(kind string) float64 {
	return testutil.ToFloat64(h.app.guardMetrics.foreign.WithLabelValues(kind))
}

// redeliver sends the newest envelope of typ again, as Slack does after a
// lost ack, and waits until the bot has dropped it as repeated.
func (h *harness) redeliver(typ, kind string) {
	h.t.Helper()
	env, ok := h.fake.LastEnvelope(typ)
	if !ok {
		h.t.Fatalf("no %s envelope to redeliver", typ)
	}
	before := h.repeated(kind)
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.Redeliver(ctx, env.EnvelopeID, "timeout"); err != nil {
		h.t.Fatal(err)
	}
	h.waitFor("the repeated "+kind+" to be dropped", func() bool { return h.repeated(kind) > before })
}

// noEphemerals fails the test if anyone was told anything ephemerally.
func (h *harness) noEphemerals() {
	h.t.Helper()
	for _, m := range h.fake.Messages(chanIn) {
		if m.Ephemeral {
			h.t.Errorf("the person was told something about a click they made once: %s", text(m))
		}
	}
}

// runs returns every run the engine holds.
func (h *harness) runs() []*pipeline.Run {
	rs, _ := h.engine.List(h.ctx, pipeline.RunFilter{})
	return rs
}

// startReplica runs a second App on the same Redis, Slack and engine, and
// waits until Slack sends new envelopes to it.
func (h *harness) startReplica() {
	h.t.Helper()
	second, err := New(h.cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	n := h.fake.Connections()
	stop := runApp(h.t, second, h.fake)
	h.t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	if err := h.fake.WaitConnections(ctx, n+1); err != nil {
		h.t.Fatal(err)
	}
}

func TestRepeatedSlashCommandOnAnotherReplicaStartsNoSecondRun(t *testing.T) {
	h := newHarness(t, nil)
	h.startRun("what is RAG?")
	h.startReplica()
	h.redeliver("slash_commands", "slash_command")
	if n := len(h.runs()); n != 1 {
		t.Fatalf("%d runs after a redelivered /research, want 1", n)
	}
	roots := 0
	for _, m := range h.fake.Messages(chanIn) {
		if m.ThreadTS == "" && !m.Ephemeral {
			roots++
		}
	}
	if roots != 1 {
		t.Errorf("%d root messages, want 1:%s", roots, h.dump())
	}
	if !strings.Contains(h.logs.String(), "ignored a repeated delivery") {
		t.Error("the log does not say a delivery was ignored")
	}
}

func TestRepeatedClickDecidesOnceAndSaysNothing(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
	h.startReplica()
	h.redeliver("interactive", "interactive")
	if n := len(h.engine.decisionsCopy()); n != 1 {
		t.Errorf("%d decisions after a redelivered click, want 1", n)
	}
	h.noEphemerals()
}

func TestRepeatedEditClickOpensOneForm(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionEdit)
	h.waitFor("the edit form", func() bool { return len(h.fake.Views()) == 1 })
	h.redeliver("interactive", "interactive")
	if n := len(h.fake.Views()); n != 1 {
		t.Errorf("%d views after a redelivered Edit click, want 1", n)
	}
	h.noEphemerals()
}

// messageRecorder is a MessageHandler that counts what reaches it.
type messageRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *messageRecorder) HandleMessage(_ context.Context, ev *slackevents.MessageEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, ev.Text)
	return nil
}

func (r *messageRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

func TestRetriedEventReachesHandlerOnce(t *testing.T) {
	rec := &messageRecorder{}
	h := newHarness(t, func(c *Config) { c.Messages = rec })
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if err := h.fake.PostUserMessage(ctx, requester, chanIn, "1700000000.000100", "my answer"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the reply to reach the handler", func() bool { return rec.count() == 1 })
	h.startReplica()
	h.redeliver("events_api", "events_api") // retry_attempt 1, same event_id, new envelope id
	env, _ := h.fake.LastEnvelope("events_api")
	if env.RetryAttempt != 1 {
		t.Fatalf("the redelivery had retry_attempt %d", env.RetryAttempt)
	}
	if n := rec.count(); n != 1 {
		t.Errorf("the retried event reached the handler %d times, want once", n)
	}
}

// foreign makes the fake send every request from another workspace or app.
func (h *harness) foreign(team, app string) {
	h.fake.RewriteEnvelopes(func(typ string, p map[string]any) {
		if team != "" {
			if _, ok := p["team_id"]; ok {
				p["team_id"] = team
			}
			if t, ok := p["team"].(map[string]any); ok {
				t["id"] = team
			}
		}
		if app != "" {
			p["api_app_id"] = app
		}
	})
}

func TestRequestsFromAnotherWorkspaceOrAppAreRefusedPolitely(t *testing.T) {
	rec := &messageRecorder{}
	h := newHarness(t, func(c *Config) { c.Messages = rec })
	plan := h.startRun("what is RAG?")

	// A slash command from another workspace: told in the ack, nothing started.
	h.foreign("T0ELSEWHERE", "")
	ack := h.slash(requester, chanIn, "what is RAG, again?")
	if !strings.Contains(string(ack.Payload), "not installed for the workspace or app") || !strings.Contains(string(ack.Payload), `"ephemeral"`) {
		t.Errorf("ack = %s, want an ephemeral refusal", ack.Payload)
	}
	if n := len(h.runs()); n != 1 {
		t.Errorf("%d runs, want 1", n)
	}

	// A click from another app: nothing decided, the clicker told why.
	h.foreign("", "A0OTHERAPP")
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the refusal of the click", func() bool { return h.ephemeralTo(requester, "not installed for the workspace or app") })
	if n := len(h.engine.decisionsCopy()); n != 0 {
		t.Errorf("%d decisions from a foreign click", n)
	}

	// A thread message from another workspace never reaches the handler.
	h.foreign("T0ELSEWHERE", "")
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if err := h.fake.PostUserMessage(ctx, requester, chanIn, plan.ThreadTS, "hello"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the event to be refused", func() bool { return h.refused("events_api") == 1 })
	if rec.count() != 0 {
		t.Error("a foreign event reached the message handler")
	}

	// The log says why, each time.
	logs := h.logs.String()
	for _, want := range []string{"reason=\"another workspace\"", "team_id=T0ELSEWHERE", "reason=\"another app\"", "app_id=A0OTHERAPP", "want_team_id=" + slackfake.TeamID} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s", want)
		}
	}
	if got := h.refused("slash_command") + h.refused("interactive"); got != 2 {
		t.Errorf("%v commands and clicks counted as refused, want 2", got)
	}

	// Back home, the same person is served.
	h.fake.RewriteEnvelopes(nil)
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
}

func TestForeignFormSubmissionIsAnsweredInTheForm(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionReject)
	h.waitFor("the reject form", func() bool { return len(h.fake.Views()) == 1 })
	h.foreign("T0ELSEWHERE", "")
	v := h.fake.Views()[0]
	ack := h.submit(requester, v, map[string]map[string]slack.BlockAction{blockkit.ReasonBlockID: {blockkit.ValueActionID: {Value: "no"}}})
	if ack.ResponseAction != "update" || !strings.Contains(string(ack.View), "not installed for the workspace or app") {
		t.Errorf("ack = %+v, want the form replaced by the refusal", ack)
	}
	if n := len(h.engine.decisionsCopy()); n != 0 {
		t.Errorf("%d decisions from a foreign form", n)
	}
}

func TestTamperedButtonValueIsRefusedAndLoggedBounded(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	huge := "run-1.cp1" + strings.Repeat("A", 2048)
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.ClickButton(ctx, requester, plan.Channel, plan.TS, blockkit.ActionApprove, huge, ""); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the refusal", func() bool { return h.ephemeralTo(requester, "Nothing was changed") })
	if n := len(h.engine.decisionsCopy()); n != 0 {
		t.Errorf("%d decisions from a tampered button", n)
	}
	logs := h.logs.String()
	if strings.Contains(logs, strings.Repeat("A", maxLogValue)) {
		t.Error("the tampered value was logged beyond the bound")
	}
	if !strings.Contains(logs, "(2057 bytes)") {
		t.Errorf("the log does not give the tampered value's length:\n%s", logs)
	}
}

func TestHostileQuestions(t *testing.T) {
	h := newHarness(t, nil)

	// 100 KB: refused with the length and the limit; nothing posted, no run.
	ack := h.slash(requester, chanIn, strings.Repeat("why ", 25600))
	if !strings.Contains(string(ack.Payload), "102399 characters long; the limit is 2000") {
		t.Errorf("ack = %.300s", ack.Payload)
	}
	if len(h.runs()) != 0 || len(h.fake.Calls("chat.postMessage")) != 0 {
		t.Fatal("an oversized question started something")
	}

	// Invisible characters are dropped: the question researched is the one shown.
	h.startRun("\u202eevil\u202c what is \u200bRAG\x1b[31m?\U000E0041\U000E0042")
	runs := h.runs()
	if len(runs) != 1 || runs[0].Question != "evil what is RAG[31m?" {
		t.Fatalf("question = %q", runs[0].Question)
	}

	// Mentions, broadcasts and masked links stay text in Slack.
	h.startRun("<!channel> ask <@U0OTHER01> about <https://evil.example|your bank>")
	var root string
	h.waitFor("the second root", func() bool {
		for _, m := range h.fake.Messages(chanIn) {
			if m.ThreadTS == "" && strings.Contains(raw(m), "evil.example") {
				root = raw(m)
				return true
			}
		}
		return false
	})
	for _, bad := range []string{"<!channel>", "<@U0OTHER01>", "<https://evil.example|"} {
		if strings.Contains(root, bad) {
			t.Errorf("root message contains %q: %s", bad, root)
		}
	}
	if !strings.Contains(root, "&lt;!channel&gt; ask &lt;@U0OTHER01&gt;") {
		t.Errorf("root message does not show the question as text: %s", root)
	}
}

// stuckMemory is a DeliveryMemory whose store does not answer.
type stuckMemory struct{}

func (stuckMemory) FirstDelivery(ctx context.Context, _, _ string, _ time.Duration) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

func TestDeliveryMemoryOutageLosesNoAction(t *testing.T) {
	t.Parallel() // it waits the real 500 ms delivery-check timeout (a context deadline); others run meanwhile
	h := newHarness(t, func(c *Config) { c.Deliveries = stuckMemory{} })
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
	if !strings.Contains(h.logs.String(), "could not check for a repeated delivery; handling it") {
		t.Error("the log does not say the check was skipped")
	}
}
