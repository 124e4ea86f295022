package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

const (
	requester = "U0REQ0001"
	stranger  = "U0OTHER01"
	approver  = "U0APPR001"
	chanIn    = "C0RESEARCH"
	chanOut   = "C0NOTIN01"
)

// harness is a bot wired to a fake Slack, a real Redis and a fake engine.
type harness struct {
	t      *testing.T
	fake   *slackfake.Server
	app    *App
	engine *fakeEngine
	pres   *Presenter
	ctx    context.Context
	rdb    *redis.Client
	cfg    Config
	logs   *lockedBuffer
	stop   func() // stops the App (as a killed process would stop answering)
	// runErr is what Run returned, once stop has returned; an error fails
	// the test unless wantRunErr was set before.
	runErr     error
	wantRunErr bool
}

func newHarness(t *testing.T, tweak func(*Config)) *harness {
	t.Helper()
	_, rdb := redistest.Start(t)
	return newHarnessOn(t, rdb, tweak)
}

// newHarnessOn is newHarness on the Redis of rdb.
func newHarnessOn(t *testing.T, rdb *redis.Client, tweak func(*Config)) *harness {
	t.Helper()
	return newHarnessClocked(t, rdb, nil, tweak)
}

// newClockHarness is newHarness whose App's timers and presenter's
// Retry-After waits run on clock; progress stays paced on the real clock.
func newClockHarness(t *testing.T, clock *quartz.Mock) *harness {
	t.Helper()
	_, rdb := redistest.Start(t)
	return newHarnessClocked(t, rdb, clock, nil)
}

// newHarnessClocked is newHarnessOn with clock (nil: the real one).
func newHarnessClocked(t *testing.T, rdb *redis.Client, clock quartz.Clock, tweak func(*Config)) *harness {
	t.Helper()
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	fake.AddChannel(chanOut, "elsewhere", false)
	fake.AddUser(requester, "ada", "Europe/Paris")
	fake.AddUser(stranger, "bob", "UTC")
	fake.AddUser(approver, "cy", "UTC")
	logs := &lockedBuffer{}
	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, testWriter{t})
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	metrics := NewMetrics()
	presCfg := PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb), Metrics: metrics, MinInterval: 100 * time.Millisecond, Logger: log}
	if clock != nil {
		presCfg.Clock = realProgress{clock}
	}
	pres, err := NewPresenter(presCfg)
	if err != nil {
		t.Fatal(err)
	}
	eng := newFakeEngine(pres)
	cfg := Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Engine: eng, Memory: redisstore.NewSlackMemory(rdb), Budget: redisstore.NewRateLimiter(rdb, "slack"),
		Metrics: metrics, Checkpoints: CheckpointsConfig{Approvers: map[string][]string{chanIn: {approver}}}, Logger: log, Workers: 4, Queue: 32, Clock: clock}
	if tweak != nil {
		tweak(&cfg)
	}
	if PlugAssistant == nil || PlugDecisions == nil {
		t.Fatal("the features are not plugged in: bot_test's TestMain sets PlugAssistant and PlugDecisions")
	}
	PlugAssistant(t, &cfg)
	PlugDecisions(t, &cfg)
	app, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, fake: fake, app: app, engine: eng, pres: pres, ctx: context.Background(), rdb: rdb, cfg: cfg, logs: logs}
	h.stop = runAppThen(t, app, fake, func(err error) {
		h.runErr = err
		if err != nil && !h.wantRunErr {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() {
		h.stop()
		h.pres.Close()
		if l := logs.String(); strings.Contains(l, fake.BotToken()) || strings.Contains(l, fake.AppToken()) {
			t.Error("a token appears in the logs")
		}
		if !strings.Contains(logs.String(), "connected to Slack") {
			t.Error("nothing was logged")
		}
		for _, a := range fake.Acks() {
			if a.Latency >= 3*time.Second {
				t.Errorf("envelope %s (%s) acked after %s", a.EnvelopeID, a.Type, a.Latency)
			}
		}
	})
	return h
}

// runApp runs app until the returned stop is called (idempotent) and waits
// for its Socket Mode connection.
func runApp(t *testing.T, app *App, fake *slackfake.Server) func() {
	t.Helper()
	return runAppThen(t, app, fake, func(err error) {
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// runAppThen is runApp handing what Run returned to returned.
func runAppThen(t *testing.T, app *App, fake *slackfake.Server, returned func(error)) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				returned(err)
			case <-time.After(10 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := fake.WaitConnected(wctx); err != nil {
		stop()
		t.Fatal(err)
	}
	// The fake sees the socket open before the app has handled the
	// connection's event; a test as short as one call could otherwise end
	// before the app logs "connected to Slack" (the harness's check).
	if !waitUntil(fake, 10*time.Second, app.connected.Load) {
		stop()
		t.Fatal("the app did not see its Socket Mode connection")
	}
	return stop
}

// lockedBuffer is a log sink safe for concurrent writers.
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

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (h *harness) slash(user, channel, text string) slackfake.Ack {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	ack, err := h.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: text, UserID: user, ChannelID: channel})
	if err != nil {
		h.t.Fatalf("slash command: %v", err)
	}
	return ack
}

func (h *harness) click(user string, m slackfake.Message, actionID string) slackfake.Ack {
	h.t.Helper()
	h.afterOfferRemembered(m, actionID)
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	ack, err := h.fake.ClickButton(ctx, user, m.Channel, m.TS, actionID, "", "")
	if err != nil {
		h.t.Fatalf("click %s: %v", actionID, err)
	}
	return ack
}

// afterOfferRemembered waits, for a checkpoint's button, until the bot has
// remembered where it posted that checkpoint (a millisecond after the post
// returns): a person clicks after seeing the message, and collapsing it on
// the decision needs to know where it is. It gives up after 2 s without
// failing, for tests whose message memory is broken on purpose.
func (h *harness) afterOfferRemembered(m slackfake.Message, actionID string) {
	if _, ok := blockkit.ActionOf(actionID); !ok || h.pres == nil {
		return
	}
	inst := buttonValue(m, actionID)
	if inst == "" {
		return
	}
	h.fake.WaitUntil(2*time.Second, func() bool {
		msg, err := h.pres.lookup(h.ctx, inst)
		return err == nil && msg != nil
	})
}

// buttonValue is the value of m's button with actionID ("" when none).
func buttonValue(m slackfake.Message, actionID string) string {
	var blocks slack.Blocks
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil {
		return ""
	}
	for _, b := range blocks.BlockSet {
		if ab, ok := b.(*slack.ActionBlock); ok && ab.Elements != nil {
			for _, e := range ab.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
					return btn.Value
				}
			}
		}
	}
	return ""
}

func (h *harness) submit(user string, v slackfake.View, values map[string]map[string]slack.BlockAction) slackfake.ViewSubmissionAck {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	ack, err := h.fake.SubmitView(ctx, user, v.SlackView(), values)
	if err != nil {
		h.t.Fatalf("submit view: %v", err)
	}
	vs, err := ack.ViewSubmission()
	if err != nil {
		h.t.Fatal(err)
	}
	return vs
}

// prefilled is the state of an open view as Slack would submit it with the
// given changes: every input keeps its pre-filled value unless changed.
func prefilled(t *testing.T, v slackfake.View, changes map[string]map[string]slack.BlockAction) map[string]map[string]slack.BlockAction {
	var doc struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(v.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	state := stateFromBlocks(t, doc.Blocks)
	for k, a := range changes {
		state[k] = a
	}
	return state
}

// text is the displayed text of a message: its text objects, decoded.
func text(m slackfake.Message) string { return displayedText(m.Blocks) }

// raw is a message's blocks as JSON without HTML escaping, for ids and values.
func raw(m slackfake.Message) string {
	var blocks any
	_ = json.Unmarshal(m.Blocks, &blocks)
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(blocks)
	return b.String()
}

// waitFor polls cond for up to 10 s.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	if !waitUntil(h.fake, 10*time.Second, cond) {
		h.t.Fatalf("timed out waiting for %s; messages: %s", what, h.dump())
	}
}

func (h *harness) dump() string {
	var b strings.Builder
	for _, m := range h.fake.Messages(chanIn) {
		b.WriteString("\n  " + m.TS + " thread=" + m.ThreadTS + " eph=" + m.ToUser + " " + m.Text)
	}
	return b.String()
}

// root is the run's root message in chanIn.
func (h *harness) root() (slackfake.Message, bool) {
	for _, m := range h.fake.Messages(chanIn) {
		if m.ThreadTS == "" && !m.Ephemeral && strings.Contains(raw(m), "Research request") {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// withAction finds the newest non-ephemeral message carrying actionID and
// containing text.
func (h *harness) withAction(actionID, text string) (slackfake.Message, bool) {
	msgs := h.fake.Messages(chanIn)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if !m.Ephemeral && strings.Contains(raw(m), `"`+actionID+`"`) && strings.Contains(raw(m), text) {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// ephemeralTo finds an ephemeral message to user containing text.
func (h *harness) ephemeralTo(user, text string) bool {
	for _, m := range h.fake.Messages(chanIn) {
		if m.Ephemeral && m.ToUser == user && strings.Contains(raw(m)+m.Text, text) {
			return true
		}
	}
	return false
}

// message returns the current version of the message at ts.
func (h *harness) message(ts string) slackfake.Message {
	for _, m := range h.fake.Messages(chanIn) {
		if m.TS == ts {
			return m
		}
	}
	h.t.Fatalf("no message %s", ts)
	return slackfake.Message{}
}

// startRun runs /research and returns the plan checkpoint message.
func (h *harness) startRun(text string) slackfake.Message {
	h.t.Helper()
	ack := h.slash(requester, chanIn, text)
	if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
		h.t.Fatalf("unexpected ack payload %s", ack.Payload)
	}
	var plan slackfake.Message
	h.waitFor("the plan checkpoint", func() bool {
		var ok bool
		plan, ok = h.withAction(blockkit.ActionApprove, "Research plan")
		return ok
	})
	return plan
}

func TestE2ESlashCommandToReport(t *testing.T) {
	h := newHarness(t, nil)
	h.engine.report.Abstract = "A page said <!channel> and <https://evil.example|click here>; a model said <@U0OTHER01>."
	plan := h.startRun("--mode full --depth quick How do RAG systems handle stale sources?")

	root, ok := h.root()
	if !ok {
		t.Fatalf("no root message: %s", h.dump())
	}
	if plan.ThreadTS != root.TS {
		t.Errorf("checkpoint is not in the root's thread: %q vs %q", plan.ThreadTS, root.TS)
	}
	h.waitFor("the root message to name the run", func() bool { return strings.Contains(raw(h.message(root.TS)), "run-1") })
	if !strings.Contains(raw(h.message(root.TS)), "How do RAG systems handle stale sources?") {
		t.Error("root message does not name the question")
	}
	if m := h.fake.Calls("chat.postMessage")[0]; m.Params["unfurl_links"] != "false" {
		t.Errorf("unfurl_links = %q, want false", m.Params["unfurl_links"])
	}
	// The button carries only the opaque instance id.
	if !strings.Contains(raw(plan), `"value":"run-1.cp1"`) {
		t.Errorf("button value is not the bare instance id: %s", plan.Blocks)
	}

	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the plan to collapse", func() bool {
		m := h.message(plan.TS)
		return !strings.Contains(raw(m), blockkit.ActionApprove) && strings.Contains(raw(m), "approved by <@"+requester+">")
	})
	var draft slackfake.Message
	h.waitFor("the draft checkpoint", func() bool {
		draft, ok = h.withAction(blockkit.ActionApprove, "Draft review")
		return ok
	})
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the uploaded report", func() bool { return len(h.fake.Files()) == 1 && h.fake.Files()[0].Completed })
	f := h.fake.Files()[0]
	if f.Channel != chanIn || f.ThreadTS != root.TS || !strings.Contains(string(f.Content), "Full report.") || !strings.HasSuffix(f.Name, ".md") {
		t.Errorf("file = %+v", f)
	}
	var report slackfake.Message
	h.waitFor("the report summary", func() bool {
		for _, m := range h.fake.Thread(chanIn, root.TS) {
			if strings.Contains(raw(m), "RAG and stale sources") && strings.Contains(raw(m), "attached") {
				report = m
				return true
			}
		}
		return false
	})
	// Untrusted text in the report is escaped: no broadcast, mention or masked link.
	all := text(report)
	for _, bad := range []string{"<!channel>", "<https://evil.example|", "<@U0OTHER01>"} {
		if strings.Contains(all, bad) {
			t.Errorf("report contains %q unescaped:\n%s", bad, all)
		}
	}
	// The summary is a markdown block, where Slack's markup characters are shown as look-alikes.
	if !strings.Contains(all, "＜!channel＞") || !strings.Contains(all, "<https://blog.example.com/rag-fresh|Keeping RAG fresh>") {
		t.Errorf("report lacks the escaped text or the citation link:\n%s", all)
	}
	// As posted, every mrkdwn object is verbatim: Slack parses no bare @here or #channel in it.
	var blocks any
	_ = json.Unmarshal(report.Blocks, &blocks)
	walkObjects(blocks, func(m map[string]any) {
		if m["type"] == "mrkdwn" && m["verbatim"] != true {
			t.Errorf("report posted a mrkdwn object without verbatim: %.80q", m["text"])
		}
	})
	if report.UnfurlLinks == nil || *report.UnfurlLinks {
		t.Error("report message unfurls links")
	}
	h.waitFor("the root message to say done", func() bool { return strings.Contains(raw(h.message(root.TS)), "done") })
	if got := len(h.engine.decisionsCopy()); got != 2 {
		t.Errorf("%d decisions, want 2", got)
	}
}

func TestE2EEditViaModalWithValidationError(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionEdit)
	h.waitFor("the edit modal", func() bool { return len(h.fake.Views()) == 1 })
	v := h.fake.Views()[0]
	if v.Method != "views.open" || v.TriggerID == "" {
		t.Fatalf("view opened by %s with trigger %q", v.Method, v.TriggerID)
	}
	if !strings.Contains(string(v.JSON), `"private_metadata":"run-1.cp1"`) || !strings.Contains(string(v.JSON), "Why do sources go stale?") {
		t.Errorf("modal is not pre-filled for the instance: %s", v.JSON)
	}
	// Clearing a required field is refused in place.
	ack := h.submit(requester, v, prefilled(t, v, map[string]map[string]slack.BlockAction{"sub_questions": {"value": {Value: "  "}}}))
	if ack.ResponseAction != "errors" || ack.Errors["sub_questions"] == "" {
		t.Fatalf("ack = %+v, want a field error on sub_questions", ack)
	}
	if n := len(h.engine.decisionsCopy()); n != 0 {
		t.Fatalf("%d decisions after an invalid form", n)
	}
	ack = h.submit(requester, v, prefilled(t, v, map[string]map[string]slack.BlockAction{
		"sub_questions": {"value": {Value: "What is RAG?\nHow is freshness measured?"}},
		"depth":         {"value": {SelectedOption: slack.OptionBlockObject{Value: "comprehensive"}}},
	}))
	if ack.ResponseAction == "errors" {
		t.Fatalf("valid form refused: %+v", ack)
	}
	h.waitFor("the edit decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
	d := h.engine.decisionsCopy()[0]
	if d.Action != checkpoints.Edit || d.By != requester || d.Values["depth"] != "comprehensive" || !strings.Contains(d.Values["sub_questions"].(string), "freshness") {
		t.Errorf("decision = %+v", d)
	}
	h.waitFor("the collapsed record naming the change", func() bool {
		b := raw(h.message(plan.TS))
		return strings.Contains(b, "edited") && strings.Contains(b, "standard → comprehensive")
	})
	// The form's opening is recorded after the views.open call, which may
	// come after the decision; wait for it, then check it came once.
	h.waitFor("the checkpoint marked opened", func() bool { h.engine.mu.Lock(); defer h.engine.mu.Unlock(); return len(h.engine.opened) >= 1 })
	h.engine.mu.Lock()
	defer h.engine.mu.Unlock()
	if len(h.engine.opened) != 1 {
		t.Errorf("Opened calls = %v", h.engine.opened)
	}
}

func TestE2ERejectWithReason(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionReject)
	h.waitFor("the reject modal", func() bool { return len(h.fake.Views()) == 1 })
	v := h.fake.Views()[0]
	ack := h.submit(requester, v, nil)
	if ack.ResponseAction != "errors" || ack.Errors[blockkit.ReasonBlockID] == "" {
		t.Fatalf("empty reason accepted: %+v", ack)
	}
	h.submit(requester, v, map[string]map[string]slack.BlockAction{blockkit.ReasonBlockID: {blockkit.ValueActionID: {Value: "Focus on <!channel> vector databases"}}})
	h.waitFor("the reject decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
	if d := h.engine.decisionsCopy()[0]; d.Action != checkpoints.Reject || d.Note != "Focus on <!channel> vector databases" {
		t.Errorf("decision = %+v", d)
	}
	h.waitFor("the collapsed reject record", func() bool {
		b := raw(h.message(plan.TS))
		return strings.Contains(b, "rejected by") && strings.Contains(b, "Reason: Focus on &lt;!channel&gt; vector databases")
	})
}

func TestE2EClickByAnotherUser(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.click(stranger, plan, blockkit.ActionApprove)
	h.waitFor("an ephemeral explanation to the stranger", func() bool { return h.ephemeralTo(stranger, "Only <@"+requester+">") })
	h.click(stranger, plan, blockkit.ActionEdit)
	h.waitFor("a second explanation", func() bool {
		n := 0
		for _, m := range h.fake.Messages(chanIn) {
			if m.Ephemeral && m.ToUser == stranger {
				n++
			}
		}
		return n == 2
	})
	if len(h.engine.decisionsCopy()) != 0 || len(h.fake.Views()) != 0 {
		t.Fatalf("a stranger changed something: %v, %d views", h.engine.decisionsCopy(), len(h.fake.Views()))
	}
	// A configured approver may decide.
	h.click(approver, plan, blockkit.ActionApprove)
	h.waitFor("the approver's decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
	if d := h.engine.decisionsCopy()[0]; d.By != approver {
		t.Errorf("decided by %q", d.By)
	}
}

// TestE2EADecisionWhoseFateIsUnknownIsNotCalledUnchanged: when the store
// stops answering after the decision was sent, the person is told that, not
// that nothing changed.
func TestE2EADecisionWhoseFateIsUnknownIsNotCalledUnchanged(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.engine.mu.Lock()
	h.engine.decideErr = fmt.Errorf("decide on run-1.cp1: %w (save run run-1: i/o timeout)", pipeline.ErrDecisionUnknown)
	h.engine.mu.Unlock()
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the truthful note", func() bool { return h.ephemeralTo(requester, "couldn't confirm that your decision was recorded") })
	for _, m := range h.fake.Messages(chanIn) {
		if m.Ephemeral && strings.Contains(strings.ToLower(raw(m)+m.Text), "nothing was changed") {
			t.Fatalf("told %q though the decision may have been recorded", m.Text)
		}
	}
	// The log says the same: the outcome is unknown, not "not applied".
	logs := h.logs.String()
	if !strings.Contains(logs, `msg="bot: decision outcome unknown`) || strings.Contains(logs, "decision not applied") {
		t.Errorf("the log does not say the outcome is unknown:\n%s", logs)
	}
}

func TestE2EDoubleClickAndRedeliveryApplyOnce(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
			defer cancel()
			_, _ = h.fake.ClickButton(ctx, requester, plan.Channel, plan.TS, blockkit.ActionApprove, "", "")
		})
	}
	wg.Wait()
	// A redelivery of the same click (Slack retries an envelope it thinks was lost).
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	payload := map[string]any{
		"type": "block_actions", "user": map[string]any{"id": requester}, "team": map[string]any{"id": slackfake.TeamID},
		"channel":   map[string]any{"id": chanIn},
		"container": map[string]any{"type": "message", "message_ts": plan.TS, "channel_id": chanIn, "thread_ts": plan.ThreadTS},
		"actions":   []any{map[string]any{"action_id": blockkit.ActionApprove, "block_id": "cp_actions", "type": "button", "value": "run-1.cp1"}},
	}
	if _, err := h.fake.Send(ctx, slackfake.Envelope{Type: "interactive", Payload: payload, RetryAttempt: 1, RetryReason: "timeout"}); err != nil {
		t.Fatal(err)
	}
	h.waitFor("a polite note about the repeat", func() bool { return h.ephemeralTo(requester, "already decided") })
	// Every delivery was acked, so its work is queued: stopping the bot
	// finishes it, and then the count is final.
	h.stop()
	if n := len(h.engine.decisionsCopy()); n != 1 {
		t.Fatalf("%d decisions, want exactly 1", n)
	}
}

func TestE2EClickOnSupersededCheckpoint(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.engine.supersede(h.ctx, "run-1")
	h.waitFor("the newer checkpoint", func() bool {
		m, ok := h.withAction(blockkit.ActionApprove, "Research plan")
		return ok && m.TS != plan.TS
	})
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the superseded explanation", func() bool { return h.ephemeralTo(requester, "no longer current") })
	if n := len(h.engine.decisionsCopy()); n != 0 {
		t.Fatalf("%d decisions on a superseded checkpoint", n)
	}
}

func TestE2ERateLimitedPostMessageIsRetried(t *testing.T) {
	clock := quartz.NewMock(t)
	h := newClockHarness(t, clock)
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	wait := clock.Trap().NewTimer("bot", "retryafter")
	defer wait.Close()
	h.fake.FailNext("chat.postMessage", 1, 1)
	acked := make(chan error, 1)
	go func() {
		_, err := h.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "what is RAG?", UserID: requester, ChannelID: chanIn})
		acked <- err
	}()
	call := wait.MustWait(ctx)
	if call.Duration != time.Second {
		t.Errorf("waits %s after a 429 with Retry-After: 1; want 1s", call.Duration)
	}
	call.MustRelease(ctx)
	if n := len(h.fake.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d chat.postMessage calls before Retry-After passed; want only the refused one", n)
	}
	clock.Advance(time.Second).MustWait(ctx)
	if err := <-acked; err != nil {
		t.Fatalf("slash command: %v", err)
	}
	h.waitFor("the plan checkpoint", func() bool { _, ok := h.withAction(blockkit.ActionApprove, "Research plan"); return ok })
	calls := h.fake.Calls("chat.postMessage")
	if len(calls) < 2 || calls[0].Status != http.StatusTooManyRequests || calls[1].Status != http.StatusOK {
		t.Fatalf("calls = %+v", calls)
	}
	if _, ok := h.root(); !ok {
		t.Error("no root message after the retry")
	}
	body := scrape(t, h.app.Handler())
	if !strings.Contains(body, `researchbot_slack_api_rate_limited_total{method="chat.postMessage"} 1`) {
		t.Errorf("429 not counted:\n%s", grep(body, "rate_limited"))
	}
}

func TestE2EChannelWithoutTheBot(t *testing.T) {
	h := newHarness(t, nil)
	h.slash(requester, chanOut, "what is RAG?")
	h.waitFor("the invite explanation", func() bool {
		for _, m := range h.fake.Messages(chanOut) {
			if m.Ephemeral && m.ToUser == requester && strings.Contains(raw(m), "/invite @researchbot") {
				return true
			}
		}
		return false
	})
}

func TestE2EHelpUsageAndLimits(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Limits = RateLimits{PerUser: PerHour(1)} })
	ack := h.slash(requester, chanIn, "help")
	if !strings.Contains(string(ack.Payload), "Checkpoints") || !strings.Contains(string(ack.Payload), `"response_type":"ephemeral"`) {
		t.Errorf("help ack = %s", ack.Payload)
	}
	ack = h.slash(requester, chanIn, strings.Repeat("x", 2001))
	if !strings.Contains(string(ack.Payload), "the limit is 2000") {
		t.Errorf("too-long ack = %s", ack.Payload)
	}
	h.startRun("first question")
	h.slash(requester, chanIn, "second question")
	h.waitFor("the rate-limit message", func() bool { return h.ephemeralTo(requester, "Try again in") })
	h.slash(requester, chanIn, "stream list")
	h.waitFor("the streams message", func() bool { return h.ephemeralTo(requester, "streams are not enabled") })
	h.slash(requester, chanIn, "list")
	h.waitFor("the run list", func() bool { return h.ephemeralTo(requester, "Your recent research runs") })
	h.slash(requester, chanIn, "status run-1")
	h.waitFor("the status", func() bool { return h.ephemeralTo(requester, "waiting for a decision") })
	h.slash(requester, chanIn, "status nope")
	h.waitFor("the unknown-run message", func() bool { return h.ephemeralTo(requester, "can't find run") })
}

func TestE2ECancelAsksToConfirm(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.slash(stranger, chanIn, "cancel run-1")
	h.waitFor("the refusal", func() bool { return h.ephemeralTo(stranger, "Only <@"+requester+">") })
	h.slash(requester, chanIn, "cancel")
	var confirm slackfake.Message
	h.waitFor("the confirmation", func() bool {
		for _, m := range h.fake.Messages(chanIn) {
			if m.Ephemeral && strings.Contains(raw(m), blockkit.ActionCancelConfirm) {
				confirm = m
				return true
			}
		}
		return false
	})
	h.click(requester, confirm, blockkit.ActionCancelConfirm)
	h.waitFor("the cancellation", func() bool { h.engine.mu.Lock(); defer h.engine.mu.Unlock(); return len(h.engine.cancels) == 1 })
	h.waitFor("the cancelled note in the thread", func() bool { return strings.Contains(h.dump(), "Research cancelled") || h.threadHas("was cancelled") })
	// The plan the run was waiting on no longer offers buttons.
	h.waitFor("the plan to close", func() bool {
		m := h.message(plan.TS)
		return !strings.Contains(raw(m), blockkit.ActionApprove) && strings.Contains(text(m), "no decision needed any more")
	})
}

func (h *harness) threadHas(text string) bool {
	for _, m := range h.fake.Messages(chanIn) {
		if strings.Contains(raw(m), text) {
			return true
		}
	}
	return false
}

func TestE2EReconnectsAfterDisconnect(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.Disconnect("refresh_requested")
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	if err := h.fake.WaitConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	h.startRun("still there?")
	h.waitFor("readiness", func() bool { return get(t, h.app.Handler(), "/readyz") == http.StatusOK })
}

func TestHealthEndpoints(t *testing.T) {
	h := newHarness(t, nil)
	if code := get(t, h.app.Handler(), "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d", code)
	}
	h.waitFor("readiness", func() bool { return get(t, h.app.Handler(), "/readyz") == http.StatusOK })
	h.slash(requester, chanIn, "help")
	// The ack's latency is recorded just after the ack is sent.
	const ackCount = "researchbot_slack_ack_latency_seconds_count{type=\"slash_command\"} 1"
	h.waitFor("the ack's latency", func() bool { return strings.Contains(scrape(t, h.app.Handler()), ackCount) })
	body := scrape(t, h.app.Handler())
	for _, want := range []string{"researchbot_slack_ack_latency_seconds_count{type=\"slash_command\"} 1", "researchbot_slack_api_calls_total", "researchbot_slack_events_total"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	notReady := HealthHandler(NewMetrics(), func() bool { return false }, nil)
	if code := get(t, notReady, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while disconnected = %d", code)
	}
}

func get(t *testing.T, h http.Handler, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestE2EOldButtonWorksAfterRestart(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.stop() // the bot process goes away while the checkpoint waits

	// A new process: new App, new Presenter, same Redis and run store.
	pres, err := NewPresenter(PresenterConfig{BotToken: h.fake.BotToken(), APIURL: h.fake.APIURL(), Memory: redisstore.NewSlackMemory(h.rdb), MinInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h.pres.Close()
	h.pres = pres
	h.engine.mu.Lock()
	h.engine.pres = pres
	h.engine.mu.Unlock()
	cfg := h.cfg
	cfg.Metrics = nil
	app, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.app = app
	h.stop = runApp(t, app, h.fake)
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.fake.WaitConnections(wctx, 2); err != nil {
		t.Fatal(err)
	}

	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the old message to collapse", func() bool {
		m := h.message(plan.TS)
		return !strings.Contains(raw(m), blockkit.ActionApprove) && strings.Contains(text(m), "approved by")
	})
	var draft slackfake.Message
	h.waitFor("the next checkpoint", func() bool { var ok bool; draft, ok = h.withAction(blockkit.ActionApprove, "Draft review"); return ok })
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report file", func() bool { return len(h.fake.Files()) == 1 })
}

// recordingHandlers receive thread messages and stream commands.
type recordingHandlers struct {
	mu       sync.Mutex
	messages []string
	streams  []StreamCommand
}

func (r *recordingHandlers) HandleMessage(_ context.Context, ev *slackevents.MessageEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.messages = append(r.messages, ev.User+"@"+ev.ThreadTimeStamp+": "+ev.Text)
	return nil
}

func (r *recordingHandlers) Register(*Routes) {}

func (r *recordingHandlers) HandleStream(_ context.Context, cmd StreamCommand) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.streams = append(r.streams, cmd)
	return nil
}

func TestE2EThreadMessagesAndStreamsAreForwarded(t *testing.T) {
	rec := &recordingHandlers{}
	h := newHarness(t, func(c *Config) { c.Messages, c.Streams.Handler = rec, rec })
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if err := h.fake.PostUserMessage(ctx, requester, chanIn, "123.000001", "weekly, please"); err != nil {
		t.Fatal(err)
	}
	h.slash(requester, chanIn, "stream new")
	h.waitFor("both handlers", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.messages) == 1 && len(rec.streams) == 1
	})
	if rec.messages[0] != requester+"@123.000001: weekly, please" || rec.streams[0].Args != "new" || rec.streams[0].UserID != requester {
		t.Errorf("messages %v, streams %+v", rec.messages, rec.streams)
	}
}

func TestE2EReconnectsAfterConnectionErrors(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.FailWith("apps.connections.open", 2, "internal_error")
	h.fake.DropConnection()
	h.waitFor("two failed connection attempts and a new connection", func() bool {
		return len(h.fake.Calls("apps.connections.open")) >= 4 && h.fake.Connections() >= 2
	})
	h.startRun("still there?")
}

func TestE2ESlowStoreStillAcksWithinThreeSeconds(t *testing.T) {
	clock := quartz.NewMock(t)
	h := newClockHarness(t, clock)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionReject)
	h.waitFor("the reject modal", func() bool { return len(h.fake.Views()) == 1 })
	release := h.engine.holdLoads(t)
	ack := h.submitAtTheGuard(clock, h.fake.Views()[0].SlackView(), map[string]map[string]slack.BlockAction{blockkit.ReasonBlockID: {blockkit.ValueActionID: {Value: "too broad"}}})
	if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
		t.Fatalf("acked with %s; want an empty ack at the guard", ack.Payload)
	}
	// The ack came first; the decision still lands once the store answers.
	release()
	h.waitFor("the decision after the slow load", func() bool { return len(h.engine.decisionsCopy()) == 1 })
}

// advanceTo moves clock to at, stopping at each timer due before (a timer
// of work already done, which fires to no one).
func advanceTo(ctx context.Context, clock *quartz.Mock, at time.Time) {
	for now := clock.Now(); now.Before(at); now = clock.Now() {
		step := at.Sub(now)
		if next, ok := clock.Peek(); ok && next < step {
			step = next
		}
		clock.Advance(step).MustWait(ctx)
	}
}

// submitAtTheGuard submits view while the handler is stuck (the test holds
// what it waits on), moves clock to the ack guard's deadline and returns the
// ack: the one the guard sent, since the handler could not.
func (h *harness) submitAtTheGuard(clock *quartz.Mock, view slack.View, values map[string]map[string]slack.BlockAction) slackfake.Ack {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	trap := clock.Trap().AfterFunc("bot", "ackguard")
	defer trap.Close()
	type result struct {
		ack slackfake.Ack
		err error
	}
	done := make(chan result, 1)
	go func() {
		ack, err := h.fake.SubmitView(ctx, requester, view, values)
		done <- result{ack, err}
	}()
	trap.MustWait(ctx).MustRelease(ctx)
	set := clock.Now() // only the test moves the clock
	select {
	case r := <-done:
		h.t.Fatalf("acked before the guard's deadline: %+v, %v", r.ack, r.err)
	default:
	}
	advanceTo(ctx, clock, set.Add(ackDeadline))
	r := <-done
	if r.err != nil {
		h.t.Fatal(r.err)
	}
	return r.ack
}

// fillPool occupies every worker and queue slot of the shared pool with
// jobs that wait until the test ends.
func (h *harness) fillPool() {
	h.t.Helper()
	release := make(chan struct{})
	h.t.Cleanup(func() { close(release) }) // runs before the harness stops the App
	n := 0
	for h.app.pool.submit(func(context.Context) { <-release }) {
		n++
	}
	if n < h.cfg.Workers {
		h.t.Fatalf("only %d slow jobs fit in the pool", n)
	}
}

func TestE2EEditOpensItsFormWhileThePoolIsFull(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("what is RAG?")
	h.fillPool()
	h.click(requester, plan, blockkit.ActionEdit)
	h.waitFor("the edit modal", func() bool { return len(h.fake.Views()) == 1 })
	v := h.fake.Views()[0]
	if v.Method != "views.open" || !strings.Contains(string(v.JSON), `"callback_id":"`+blockkit.CallbackEdit+`"`) || !strings.Contains(string(v.JSON), `"private_metadata":"run-1.cp1"`) {
		t.Fatalf("view = %s %s", v.Method, v.JSON)
	}
	for _, c := range h.fake.Calls("views.open") {
		if c.Error != "" {
			t.Errorf("views.open answered %s", c.Error)
		}
	}
	h.click(requester, plan, blockkit.ActionReject)
	h.waitFor("the reject modal", func() bool { return len(h.fake.Views()) == 2 })
	if v := h.fake.Views()[1]; !strings.Contains(string(v.JSON), `"callback_id":"`+blockkit.CallbackReject+`"`) {
		t.Errorf("second view = %s", v.JSON)
	}
}

func TestE2EEditWithASlowStoreOpensALoadingFormFirst(t *testing.T) {
	clock := quartz.NewMock(t)
	h := newClockHarness(t, clock)
	plan := h.startRun("what is RAG?")
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	budget := clock.Trap().NewTimer("bot", "formcheck")
	defer budget.Close()
	// The store is slow: the trigger_id would expire before a form built
	// after the load opened.
	release := h.engine.holdLoads(t)
	h.click(requester, plan, blockkit.ActionEdit)
	budget.MustWait(ctx).MustRelease(ctx)
	advanceTo(ctx, clock, clock.Now().Add(formCheckBudget))
	h.waitFor("the loading view", func() bool { return len(h.fake.Views()) == 1 })
	release()
	h.waitFor("the form to replace the loading view", func() bool { return len(h.fake.Views()) == 2 })
	views := h.fake.Views()
	if views[0].Method != "views.open" || !strings.Contains(string(views[0].JSON), "Loading") {
		t.Errorf("first view: %s %s", views[0].Method, views[0].JSON)
	}
	if views[1].Method != "views.update" || views[1].ID != views[0].ID || !strings.Contains(string(views[1].JSON), `"private_metadata":"run-1.cp1"`) {
		t.Fatalf("second view: %s %s", views[1].Method, views[1].JSON)
	}
	h.waitFor("the checkpoint marked opened", func() bool { h.engine.mu.Lock(); defer h.engine.mu.Unlock(); return len(h.engine.opened) == 1 })

	// A stranger's slow click ends in a notice in the form, not a form.
	release = h.engine.holdLoads(t)
	h.click(stranger, plan, blockkit.ActionReject)
	budget.MustWait(ctx).MustRelease(ctx)
	advanceTo(ctx, clock, clock.Now().Add(formCheckBudget))
	h.waitFor("the stranger's loading view", func() bool { return len(h.fake.Views()) == 3 })
	release()
	h.waitFor("the notice", func() bool { return len(h.fake.Views()) == 4 })
	if v := h.fake.Views()[3]; v.Method != "views.update" || !strings.Contains(string(v.JSON), "who started this research") || strings.Contains(string(v.JSON), blockkit.CallbackReject) {
		t.Errorf("stranger's view: %s %s", v.Method, v.JSON)
	}
}

// ephemeralIn finds an ephemeral message to user in channel containing text.
func (h *harness) ephemeralIn(channel, user, text string) bool {
	for _, m := range h.fake.Messages(channel) {
		if m.Ephemeral && m.ToUser == user && strings.Contains(raw(m)+m.Text, text) {
			return true
		}
	}
	return false
}

func TestE2EStatusOfAnotherRunIsHiddenOutsideItsChannel(t *testing.T) {
	h := newHarness(t, nil)
	h.startRun("a private question")
	dm := slackfake.DMChannelID(stranger)
	h.slash(stranger, dm, "status run-1")
	h.waitFor("the refusal", func() bool { return h.ephemeralIn(dm, stranger, "can't find run") })
	if h.ephemeralIn(dm, stranger, "a private question") || h.ephemeralIn(dm, stranger, "waiting for a decision") {
		t.Fatal("a stranger saw the status of another's run")
	}
	// In the run's own channel the thread is visible anyway, so is the status.
	h.slash(stranger, chanIn, "status run-1")
	h.waitFor("the status in the run's channel", func() bool { return h.ephemeralTo(stranger, "waiting for a decision") })
	// The channel's approver and the requester may ask from anywhere.
	h.slash(approver, slackfake.DMChannelID(approver), "status run-1")
	h.waitFor("the approver's status", func() bool {
		return h.ephemeralIn(slackfake.DMChannelID(approver), approver, "waiting for a decision")
	})
	h.slash(requester, slackfake.DMChannelID(requester), "status run-1")
	h.waitFor("the requester's status", func() bool {
		return h.ephemeralIn(slackfake.DMChannelID(requester), requester, "waiting for a decision")
	})
}

func TestE2ESlowRefusedSubmissionIsExplainedInTheThread(t *testing.T) {
	clock := quartz.NewMock(t)
	h := newClockHarness(t, clock)
	plan := h.startRun("what is RAG?")
	h.click(requester, plan, blockkit.ActionReject)
	h.waitFor("the reject modal", func() bool { return len(h.fake.Views()) == 1 })
	// Meanwhile the approver decides; the requester's form is now stale.
	h.click(approver, plan, blockkit.ActionApprove)
	h.waitFor("the approver's decision", func() bool { return len(h.engine.decisionsCopy()) == 1 })
	// The store answers past the 2.5 s guard: the form closes empty.
	release := h.engine.holdLoads(t)
	ack := h.submitAtTheGuard(clock, h.fake.Views()[0].SlackView(), map[string]map[string]slack.BlockAction{blockkit.ReasonBlockID: {blockkit.ValueActionID: {Value: "too broad"}}})
	if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
		t.Fatalf("ack with %s; want an empty ack at the guard", ack.Payload)
	}
	release()
	h.waitFor("the explanation in the thread", func() bool { return h.ephemeralTo(requester, "already decided") })
	if n := len(h.engine.decisionsCopy()); n != 1 {
		t.Errorf("%d decisions, want 1", n)
	}
}

func TestE2EOnlyThreadRepliesReachTheMessageHandler(t *testing.T) {
	rec := &recordingHandlers{}
	// One worker runs jobs in order: had the channel message been queued, it
	// would be handled before the thread reply posted after it.
	h := newHarness(t, func(c *Config) { c.Messages, c.Workers = rec, 1 })
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if err := h.fake.PostUserMessage(ctx, stranger, chanIn, "", "lunch, anyone?"); err != nil {
		t.Fatal(err)
	}
	if err := h.fake.PostUserMessage(ctx, requester, chanIn, "123.000001", "weekly, please"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the thread reply", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.messages) >= 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.messages) != 1 || rec.messages[0] != requester+"@123.000001: weekly, please" {
		t.Errorf("handled %q; want only the thread reply", rec.messages)
	}
}
