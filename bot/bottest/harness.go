// Package bottest is test support for bot's features: a real bot.App, with
// the features a test plugs in, on a fake Slack (internal/slackfake) and a
// real Redis (internal/redistest), driven as Slack would drive it (slash
// commands, clicks, form submissions, messages) and read through what the
// fake Slack received. It is imported only by tests.
//
// New checks at the end of each test what bot's own tests check: no token
// appears in the logs, every envelope was acked within Slack's 3 s, and the
// App saw its connection. A test package using it should verify in its
// TestMain that no goroutine outlives the tests (goleak), as bot's do.
package bottest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

// The people and the channel the fake Slack knows from the start.
const (
	Requester = "U0REQ0001" // ada, in Europe/Paris
	Stranger  = "U0OTHER01" // bob, in UTC
	Approver  = "U0APPR001" // cy, in UTC
	Channel   = "C0RESEARCH"
)

// waitLimit bounds every wait of a Harness.
const waitLimit = 10 * time.Second

// Harness is a running bot.App on a fake Slack and a real Redis.
type Harness struct {
	t *testing.T
	// Ctx is the tests' context (never cancelled).
	Ctx context.Context
	// Fake is the fake Slack: what the App posted, opened and uploaded.
	Fake *slackfake.Server
	// Redis is the App's Redis (its SlackMemory and rate budget live there).
	Redis *redis.Client
	// Engine is the App's engine: an *Engine unless setup set another.
	Engine bot.Engine
	// Logger is the App's logger; give it to the features too.
	Logger  *slog.Logger
	Metrics *bot.Metrics
	// Memory is the App's SlackMemory.
	Memory bot.SlackMemory
	// Sender is the App's Web API client, on the fake Slack: features share
	// it (Kit), as they do in the assembly.
	Sender *bot.Sender
	App    *bot.App

	logs *lockedBuffer
	stop func()
}

// New starts a bot.App on a new fake Slack and Redis, with Requester,
// Stranger, Approver and Channel known (the bot a member of Channel), an
// *Engine, 4 workers and a queue of 32. setup (nil: none) may change the
// Config before the App is built: plug features in (Config.Features,
// Config.Streams…) built over h.Kit() (the App's Sender, metrics and
// logger) and h.Redis, or set another Engine. The App stops when the test ends.
func New(t *testing.T, setup func(h *Harness, c *bot.Config)) *Harness {
	t.Helper()
	_, rdb := redistest.Start(t)
	fake := slackfake.New(t)
	fake.AddChannel(Channel, "research", true)
	fake.AddUser(Requester, "ada", "Europe/Paris")
	fake.AddUser(Stranger, "bob", "UTC")
	fake.AddUser(Approver, "cy", "UTC")
	logs := &lockedBuffer{}
	var out io.Writer = logs
	if testing.Verbose() {
		out = io.MultiWriter(logs, testWriter{t})
	}
	h := &Harness{t: t, Ctx: context.Background(), Fake: fake, Redis: rdb, Engine: NewEngine(),
		Logger:  slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics: bot.NewMetrics(), Memory: redisstore.NewSlackMemory(rdb), logs: logs}
	h.Sender = bot.NewSender(bot.SenderConfig{BotToken: fake.BotToken(), AppToken: fake.AppToken(), APIURL: fake.APIURL(), Metrics: h.Metrics, Logger: h.Logger})
	cfg := bot.Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Sender: h.Sender, Engine: h.Engine,
		Memory: h.Memory, Budget: redisstore.NewRateLimiter(rdb, "slack"), Metrics: h.Metrics, Logger: h.Logger, Workers: 4, Queue: 32}
	if setup != nil {
		setup(h, &cfg)
	}
	h.Engine, h.Memory, h.Metrics = cfg.Engine, cfg.Memory, cfg.Metrics
	app, err := bot.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.App = app
	h.stop = h.run()
	t.Cleanup(func() {
		h.stop()
		l := logs.String()
		if strings.Contains(l, fake.BotToken()) || strings.Contains(l, fake.AppToken()) {
			t.Error("a token appears in the logs")
		}
		if !strings.Contains(l, "connected to Slack") {
			t.Error("the App never logged its connection to Slack")
		}
		for _, a := range fake.Acks() {
			if a.Latency >= 3*time.Second {
				t.Errorf("envelope %s (%s) acked after %s", a.EnvelopeID, a.Type, a.Latency)
			}
		}
	})
	return h
}

// Kit is what the App's features take from the transport here: the App's
// Sender, metrics and logger (as the assembly hands them to each feature).
func (h *Harness) Kit() bot.Kit {
	return bot.Kit{Sender: h.Sender, Metrics: h.Metrics, Logger: h.Logger}
}

// run runs the App until the returned stop is called (idempotent) and waits
// for its Socket Mode connection; an error Run returns fails the test.
func (h *Harness) run() func() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.App.Run(ctx) }() // owner: the Harness; stopped by stop
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					h.t.Errorf("Run: %v", err)
				}
			case <-time.After(waitLimit):
				h.t.Error("Run did not return after cancel")
			}
		})
	}
	wctx, wcancel := context.WithTimeout(ctx, waitLimit)
	defer wcancel()
	if err := h.Fake.WaitConnected(wctx); err != nil {
		stop()
		h.t.Fatal(err)
	}
	return stop
}

// Stop stops the App as a killed process would stop answering, after the
// work in flight; it returns when Run has returned. Calling it again does
// nothing (the test's end calls it).
func (h *Harness) Stop() { h.stop() }

// Slash runs "/research text" as user in channel and returns its ack.
func (h *Harness) Slash(user, channel, text string) slackfake.Ack {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, waitLimit)
	defer cancel()
	ack, err := h.Fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: text, UserID: user, ChannelID: channel})
	if err != nil {
		h.t.Fatalf("slash command: %v", err)
	}
	return ack
}

// Click clicks, as user, the button actionID of message m and returns the
// ack.
func (h *Harness) Click(user string, m slackfake.Message, actionID string) slackfake.Ack {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, waitLimit)
	defer cancel()
	ack, err := h.Fake.ClickButton(ctx, user, m.Channel, m.TS, actionID, "", "")
	if err != nil {
		h.t.Fatalf("click %s: %v", actionID, err)
	}
	return ack
}

// Form is a form's submission values as Submit takes them: each block's
// input, whose action id is "value" (block id → "value" → action).
func Form(fields map[string]slack.BlockAction) map[string]map[string]slack.BlockAction {
	out := map[string]map[string]slack.BlockAction{}
	for block, act := range fields {
		out[block] = map[string]slack.BlockAction{"value": act}
	}
	return out
}

// Selected is a select menu's input with the option v chosen.
func Selected(v string) slack.BlockAction {
	return slack.BlockAction{SelectedOption: slack.OptionBlockObject{Value: v}}
}

// Submit submits, as user, the open view v with values (block id → action
// id → value) and returns Slack's reading of the ack.
func (h *Harness) Submit(user string, v slackfake.View, values map[string]map[string]slack.BlockAction) slackfake.ViewSubmissionAck {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.Ctx, waitLimit)
	defer cancel()
	ack, err := h.Fake.SubmitView(ctx, user, v.SlackView(), values)
	if err != nil {
		h.t.Fatalf("submit view: %v", err)
	}
	vs, err := ack.ViewSubmission()
	if err != nil {
		h.t.Fatal(err)
	}
	return vs
}

// Mention posts, as user, a message mentioning the bot in channel's thread
// (the channel itself when thread is "").
func (h *Harness) Mention(user, channel, thread, text string) {
	h.t.Helper()
	if err := h.Fake.PostUserMention(h.Ctx, user, channel, thread, text); err != nil {
		h.t.Fatal(err)
	}
}

// Message posts, as user, a message in channel's thread (the channel
// itself when thread is "").
func (h *Harness) Message(user, channel, thread, text string) {
	h.t.Helper()
	if err := h.Fake.PostUserMessage(h.Ctx, user, channel, thread, text); err != nil {
		h.t.Fatal(err)
	}
}

// Wait waits until cond holds, as the fake Slack changes, for up to 10 s;
// then it fails the test naming what, with Channel's messages.
func (h *Harness) Wait(what string, cond func() bool) {
	h.t.Helper()
	if !h.Fake.WaitUntil(waitLimit, cond) {
		h.t.Fatalf("timed out waiting for %s; messages in %s:\n%s", what, Channel, h.Dump(Channel))
	}
}

// Dump lists channel's messages, one a line, for failure messages.
func (h *Harness) Dump(channel string) string {
	var b strings.Builder
	for _, m := range h.Fake.Messages(channel) {
		eph := "n"
		if m.Ephemeral {
			eph = "y"
		}
		b.WriteString(m.TS + " " + m.ThreadTS + " eph=" + eph + " " + m.ToUser + " " + m.Text + "\n")
	}
	return b.String()
}

// EphemeralWith waits for an ephemeral message to user in channel whose
// blocks or text contain text, and returns it.
func (h *Harness) EphemeralWith(channel, user, text string) slackfake.Message {
	h.t.Helper()
	var found slackfake.Message
	h.Wait("an ephemeral message with "+text, func() bool {
		for _, m := range h.Fake.Messages(channel) {
			if m.Ephemeral && m.ToUser == user && strings.Contains(string(m.Blocks)+m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// InThread returns the latest visible message of channel's thread whose
// blocks (Raw) contain every one of subs.
func InThread(fake *slackfake.Server, channel, thread string, subs ...string) (slackfake.Message, bool) {
	msgs := fake.Thread(channel, thread)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; !m.Ephemeral && containsAll(Raw(m), subs) {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// EphemeralInThread reports whether user was shown, in channel's thread,
// an ephemeral message whose blocks (Raw) or text contain every one of subs.
func EphemeralInThread(fake *slackfake.Server, channel, thread, user string, subs ...string) bool {
	for _, m := range fake.Thread(channel, thread) {
		if m.Ephemeral && m.ToUser == user && containsAll(Raw(m)+m.Text, subs) {
			return true
		}
	}
	return false
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// ButtonValue is the value of m's button actionID ("" when none).
func ButtonValue(m slackfake.Message, actionID string) string {
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

// Raw is a message's blocks as JSON without HTML escaping, so "<" reads as
// "<" in ids, values and mentions.
func Raw(m slackfake.Message) string {
	var blocks any
	_ = json.Unmarshal(m.Blocks, &blocks)
	return string(RawJSON(blocks))
}

// RawJSON is v as JSON without HTML escaping; it panics if v cannot be
// encoded (a test's own value).
func RawJSON(v any) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return json.RawMessage(b.String())
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

// testWriter sends the logs to the test's log (with -v).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
