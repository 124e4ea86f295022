package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/streams"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// conversationScript is the stream conversation model of the end-to-end
// test: the proposal for each successive call, as a model would answer the
// user's actions in order. Every slice is non-nil, as strict output requires.
func conversationScript(n int) scheduler.Proposal {
	none := []scheduler.FieldValue{}
	empty := []string{}
	val := func(f scheduler.SpecField, v string) scheduler.FieldValue {
		return scheduler.FieldValue{Field: f, Value: v, Values: []string{}}
	}
	list := func(f scheduler.SpecField, v ...string) scheduler.FieldValue {
		return scheduler.FieldValue{Field: f, Value: "", Values: v}
	}
	switch n {
	case 1: // typed: what to watch → purpose extracted; stream type suggestions
		return scheduler.Proposal{Mode: scheduler.ModeSuggestion, Message: "Got it. What type of research is this? <!channel>",
			TargetField: scheduler.FieldStreamType, ExtractedData: []scheduler.FieldValue{val(scheduler.FieldPurpose, "Track heat pump competitors")},
			Suggestions: []string{"competitive", "market"}, Options: empty, NextStep: scheduler.StepStreamType}
	case 2: // clicked "competitive" → focus area checkboxes
		return scheduler.Proposal{Mode: scheduler.ModeSuggestion, Message: "Which areas should it focus on?",
			TargetField: scheduler.FieldFocusAreas, ExtractedData: none, Suggestions: empty,
			Options: []string{"Nordics", "Germany", "France"}, NextStep: scheduler.StepFocusAreas}
	case 3: // ticked two areas → competitors (optional)
		return scheduler.Proposal{Mode: scheduler.ModeSuggestion, Message: "Any companies to monitor?",
			TargetField: scheduler.FieldCompetitors, ExtractedData: none, Suggestions: empty,
			Options: []string{"Acme Heat", "Globex"}, NextStep: scheduler.StepCompetitors}
	case 4: // skipped competitors → a question
		return scheduler.Proposal{Mode: scheduler.ModeQuestion, Message: "What should I call it, which keywords, goals, outcomes and how often?",
			ExtractedData: none, Suggestions: empty, Options: empty, NextStep: scheduler.StepExploration}
	case 5: // typed the rest → review
		return scheduler.Proposal{Mode: scheduler.ModeQuestion, Message: "Here is your stream.",
			ExtractedData: []scheduler.FieldValue{
				val(scheduler.FieldStreamName, "Heat Pump Watch"), list(scheduler.FieldKeywords, "heat pump", "air-to-water"),
				list(scheduler.FieldBusinessGoals, "Inform pricing"), val(scheduler.FieldExpectedOutcomes, "Quarterly pricing decisions"),
				val(scheduler.FieldReportFrequency, "daily"),
			},
			Suggestions: empty, Options: empty, NextStep: scheduler.StepReview}
	default: // typed at the review: change an earlier field (seed 003, scenario C)
		return scheduler.Proposal{Mode: scheduler.ModeQuestion, Message: "Updated the purpose.",
			ExtractedData: []scheduler.FieldValue{val(scheduler.FieldPurpose, "Monitor heat pump pricing")},
			Suggestions:   empty, Options: empty, NextStep: scheduler.StepReview}
	}
}

// streamsE2E is researchbot with streams: the real engine and scheduler on a
// real redis-server, the scripted models, the fake web and the fake Slack.
type streamsE2E struct {
	t         *testing.T
	fake      *slackfake.Server
	svc       *scheduler.Service
	engine    *pipeline.Engine
	clock     *researchtest.Clock
	convCalls func() []llmtest.Call
	metrics   *bot.Metrics
	convs     *redisstore.Conversations
	ctx       context.Context
	channel   string
}

const (
	streamOwner   = "U0OWNER01"
	streamOther   = "U0OTHER01"
	streamChannel = "C0STREAMS"
)

func newStreamsE2E(t *testing.T) *streamsE2E {
	t.Helper()
	srv, rdb := redistest.Start(t)
	pages := researchtest.DefaultPages()[:4]
	for i := range pages {
		pages[i].Published = time.Time{} // undated: the digest window does not drop them
	}
	web := researchtest.NewWeb(t, pages...)
	res := &researchtest.Researcher{}
	var mu sync.Mutex
	convN := 0
	model := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		if c.SchemaName == app.StreamModelSchema {
			mu.Lock()
			convN++
			n := convN
			mu.Unlock()
			return llmtest.JSON(conversationScript(n))
		}
		return res.Respond(c)
	})
	cfg := engineConfig(t, srv.URL, model.URL(), web.URL())
	fake := slackfake.New(t)
	fake.AddChannel(streamChannel, "heat-pumps", true)
	fake.AddUser(streamOwner, "ada", "Europe/Oslo")
	fake.AddUser(streamOther, "bob", "UTC")

	ctx, cancel := context.WithCancel(context.Background())
	metrics := bot.NewMetrics()
	a, pres := startEngine(t, ctx, cfg, fake, redisstore.NewSlackMemory(rdb), metrics, "runs")
	store := redisstore.NewStreams(rdb, "rb:")
	a.AddPresenter(scheduler.OriginKind, scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Store: store, Inner: pres}))
	clock := researchtest.NewClock(time.Now())
	svc, err := scheduler.NewService(scheduler.ServiceConfig{Store: store, Runner: a.Engine, Queue: "runs", Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	feature, err := streams.New(streams.Config{
		Service: svc, Conversations: redisstore.NewConversations(rdb, "rb:", 0), Model: a.StreamModel(),
		Kit: bot.Kit{Sender: bot.NewSender(bot.SenderConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Metrics: metrics}), Metrics: metrics, Clock: clock},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopWorker, err := a.StartWorker([]string{"runs"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopWorker)
	bc := bot.Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Engine: a.Engine,
		Memory: redisstore.NewSlackMemory(rdb), Budget: redisstore.NewRateLimiter(rdb, "slack"), Metrics: metrics, Streams: bot.StreamsUIConfig{Handler: feature, Mentions: feature}}
	plugConversation(t, &bc, a.Engine, bot.Limit{}, bot.Limit{})
	plugDecisions(t, &bc, a.Engine)
	runBot(t, ctx, cancel, fake, bc)
	return &streamsE2E{t: t, fake: fake, svc: svc, engine: a.Engine, clock: clock, ctx: ctx, channel: streamChannel, metrics: metrics, convs: redisstore.NewConversations(rdb, "rb:", 0),
		convCalls: func() []llmtest.Call { return conversationCalls(model) }}
}

func conversationCalls(s *llmtest.Server) []llmtest.Call {
	var out []llmtest.Call
	for _, c := range s.Calls() {
		if c.SchemaName == app.StreamModelSchema {
			out = append(out, c)
		}
	}
	return out
}

func (h *streamsE2E) slash(user, text string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: text, UserID: user, ChannelID: h.channel}); err != nil {
		h.t.Fatalf("/research %s: %v", text, err)
	}
}

// waitFor waits for cond until it holds or the time is up.
func (h *streamsE2E) waitFor(what string, limit time.Duration, cond func() bool) {
	h.t.Helper()
	if !bot.WaitUntil(h.fake, limit, cond) {
		h.t.Fatalf("timed out waiting for %s; messages:\n%s", what, dumpAll(h.fake, h.channel))
	}
}

// botMessages are the bot's visible (non-ephemeral) messages in a thread.
// newStream runs "/research stream new" and returns the thread of its root message.
func (h *streamsE2E) newStream() (thread string) {
	h.t.Helper()
	h.slash(streamOwner, "stream new")
	h.waitFor("the stream root message", 10*time.Second, func() bool {
		for _, m := range h.fake.Messages(h.channel) {
			if m.Text == "New research stream" {
				thread = m.TS
				return true
			}
		}
		return false
	})
	h.nextTurn(thread, 0) // the first turn, read before anyone answers
	return thread
}

func (h *streamsE2E) botMessages(thread string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range h.fake.Thread(h.channel, thread) {
		if !m.Ephemeral && m.BotID != "" && m.TS != thread {
			out = append(out, m)
		}
	}
	return out
}

// nextTurn waits for the bot's next visible message in the thread.
func (h *streamsE2E) nextTurn(thread string, before int) slackfake.Message {
	h.t.Helper()
	h.waitFor("the next turn", 10*time.Second, func() bool { return len(h.botMessages(thread)) > before })
	msgs := h.botMessages(thread)
	turn := msgs[len(msgs)-1]
	h.waitShown(thread, turn.TS)
	return turn
}

// waitShown waits until the bot has remembered that the message ts shows
// the conversation's turn, as a person answers after reading it: an answer
// typed before is refused ("Not applied"), which is what the bot should do.
func (h *streamsE2E) waitShown(thread, ts string) {
	h.t.Helper()
	h.waitFor("the turn remembered", 10*time.Second, func() bool {
		c, _, ok, err := h.convs.Get(context.Background(), h.channel, thread)
		return err == nil && (!ok || c.Shown == ts || c.Step == scheduler.StepComplete)
	})
}

// ephemeralFor waits for an ephemeral message to user containing text.
func (h *streamsE2E) ephemeralFor(user, text string) slackfake.Message {
	h.t.Helper()
	var found slackfake.Message
	h.waitFor("an ephemeral message with "+text, 10*time.Second, func() bool {
		for _, m := range h.fake.Messages(h.channel) {
			if m.Ephemeral && m.ToUser == user && strings.Contains(displayed(m)+m.Text, text) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

func (h *streamsE2E) click(user string, m slackfake.Message, actionID string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.ClickButton(ctx, user, h.channel, m.TS, actionID, "", ""); err != nil {
		h.t.Fatalf("click %s: %v", actionID, err)
	}
}

// tickAndContinue ticks the checkboxes and clicks Continue, sending the
// checkboxes' state with the click as Slack does.
func (h *streamsE2E) tickAndContinue(user string, m slackfake.Message, values ...string) {
	h.t.Helper()
	var opts []map[string]any
	for _, v := range values {
		opts = append(opts, map[string]any{"text": map[string]any{"type": "plain_text", "text": v}, "value": v})
	}
	payload := map[string]any{
		"type": "block_actions", "api_app_id": slackfake.AppID, "token": "fake-verification-token", "trigger_id": "1.2.abc",
		"user":      map[string]any{"id": user, "username": "ada", "name": "ada", "team_id": slackfake.TeamID},
		"team":      map[string]any{"id": slackfake.TeamID, "domain": slackfake.TeamDomain},
		"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": h.channel, "is_ephemeral": false, "thread_ts": m.ThreadTS},
		"channel":   map[string]any{"id": h.channel, "name": "heat-pumps"},
		"message": map[string]any{"type": "message", "ts": m.TS, "thread_ts": m.ThreadTS, "text": m.Text, "user": m.User,
			"bot_id": m.BotID, "blocks": json.RawMessage(m.Blocks)},
		"state": map[string]any{"values": map[string]any{"st_opts": map[string]any{
			blockkit.ActionStreamOptions: map[string]any{"type": "checkboxes", "selected_options": opts},
		}}},
		"actions": []any{map[string]any{"action_id": blockkit.ActionStreamContinue, "block_id": "st_buttons", "type": "button",
			"value": "continue", "action_ts": "1.000001"}},
	}
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.Send(ctx, slackfake.Envelope{Type: "interactive", Payload: payload}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *streamsE2E) reply(user, thread, text string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if err := h.fake.PostUserMention(ctx, user, h.channel, thread, text); err != nil {
		h.t.Fatal(err)
	}
}

// digestDone waits until the stream's newest digest record is final.
func (h *streamsE2E) digestDone(name string, n int) *scheduler.Stream {
	h.t.Helper()
	var st *scheduler.Stream
	h.waitFor("digest "+name, 90*time.Second, func() bool {
		var err error
		st, err = h.svc.Show(h.ctx, name)
		return err == nil && len(st.Digests) >= n && st.Digests[n-1].Status.Final() && st.Running == ""
	})
	return st
}

// channelDigests are the digest summaries posted as new channel messages.
func (h *streamsE2E) channelDigests() []slackfake.Message {
	var out []slackfake.Message
	for _, m := range h.fake.Messages(h.channel) {
		if !m.Ephemeral && m.ThreadTS == "" && strings.HasPrefix(m.Text, "Research ") {
			out = append(out, m)
		}
	}
	return out
}

// TestStreamsEndToEnd creates a research stream by conversation in Slack —
// a typed reply, a suggestion button, checkboxes, a Skip, a typed change of
// an earlier field, Confirm — then runs a dry run in the thread, a digest by
// command in the channel and one on schedule; pause stops the schedule,
// another user cannot pause it, and delete (confirmed) removes it.
func TestStreamsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("several research runs")
	}
	h := newStreamsE2E(t)

	// /research stream new: a root message and the first turn in its thread.
	thread := h.newStream()
	turn := h.nextTurn(thread, 0)
	if !strings.Contains(displayed(turn), "What would you like to keep an eye on") {
		t.Fatalf("first turn: %s", displayed(turn))
	}

	// Someone else's reply in the thread is ignored.
	h.reply(streamOther, thread, "I think it should watch cats")
	// The owner's reply is a text_input.
	h.reply(streamOwner, thread, "I want to track heat pump competitors & their prices")
	turn = h.nextTurn(thread, 1)
	if calls := h.convCalls(); len(calls) != 1 || !strings.Contains(calls[0].User, "heat pump competitors \\u0026 their prices") && !strings.Contains(calls[0].User, "heat pump competitors & their prices") {
		t.Fatalf("the other user's reply reached the model, or the owner's did not: %d calls", len(calls))
	}
	if s := displayed(turn); strings.Contains(s, "<!channel>") || !strings.Contains(s, "&lt;!channel&gt;") {
		t.Errorf("the model's message is not escaped: %s", s)
	}

	// A suggestion button: option_selected.
	h.click(streamOwner, turn, blockkit.ActionStreamPick+"0") // "competitive"
	turn = h.nextTurn(thread, 2)
	if !strings.Contains(string(turn.Blocks), blockkit.ActionStreamOptions) {
		t.Fatalf("focus areas turn has no checkboxes: %s", turn.Blocks)
	}
	// The clicked message lost its buttons and says what was chosen.
	msgs := h.botMessages(thread)
	if prev := msgs[len(msgs)-2]; strings.Contains(string(prev.Blocks), blockkit.ActionStreamPick) || !strings.Contains(displayed(prev), "chose *competitive*") {
		t.Errorf("the answered turn still has buttons or lacks the choice: %s", displayed(prev))
	}

	// Checkboxes and Continue: options_selected.
	h.tickAndContinue(streamOwner, turn, "Nordics", "Germany")
	turn = h.nextTurn(thread, 3)
	if !strings.Contains(string(turn.Blocks), blockkit.ActionStreamSkip) {
		t.Fatalf("the optional competitors turn has no Skip: %s", turn.Blocks)
	}
	// Another user cannot answer.
	h.click(streamOther, turn, blockkit.ActionStreamSkip)
	h.ephemeralFor(streamOther, "who is setting up this stream")
	// Skip: skip_step.
	h.click(streamOwner, turn, blockkit.ActionStreamSkip)
	turn = h.nextTurn(thread, 4)
	// A typed answer with the rest, then a typed change of an earlier field.
	h.reply(streamOwner, thread, "Call it Heat Pump Watch; keywords heat pump, air-to-water; daily please")
	turn = h.nextTurn(thread, 5)
	if !strings.Contains(string(turn.Blocks), blockkit.ActionStreamConfirm) {
		t.Fatalf("no review after the required fields: %s", displayed(turn))
	}
	h.reply(streamOwner, thread, "Actually, change the purpose to 'Monitor heat pump pricing'")
	review := h.nextTurn(thread, 6)
	rs := displayed(review)
	for _, want := range []string{"Monitor heat pump pricing", "Heat Pump Watch", "Nordics, Germany", "competitive", "Europe/Oslo", "<#" + streamChannel + ">"} {
		if !strings.Contains(rs, want) {
			t.Errorf("review lacks %q:\n%s", want, rs)
		}
	}
	if n := len(h.convCalls()); n != 6 {
		t.Errorf("%d model calls for the conversation, want 6", n)
	}

	// Confirm: the stream is created, owned by the creator, in this channel,
	// in the creator's Slack time zone.
	h.click(streamOwner, review, blockkit.ActionStreamConfirm)
	created := h.nextTurn(thread, 7)
	if !strings.Contains(string(created.Blocks), blockkit.ActionStreamDryRun) {
		t.Fatalf("no dry run offered: %s", displayed(created))
	}
	st, err := h.svc.Show(h.ctx, "heat pump watch")
	if err != nil {
		t.Fatal(err)
	}
	if st.Owner != streamOwner || st.Spec.Channel != streamChannel || st.Spec.TimeZone != "Europe/Oslo" || st.Spec.Frequency != scheduler.Daily ||
		st.Spec.Purpose != "Monitor heat pump pricing" || len(st.Spec.Competitors) != 0 || st.Spec.Type != scheduler.TypeCompetitive {
		t.Fatalf("created stream: %+v", st)
	}
	if n := len(h.convCalls()); n != 6 {
		t.Errorf("Confirm called the model (%d calls)", n)
	}

	// Dry run: a digest in the creation thread.
	filesBefore := len(h.fake.Files())
	h.click(streamOwner, created, blockkit.ActionStreamDryRun)
	st = h.digestDone("Heat Pump Watch", 1)
	if d := st.Digests[0]; d.Trigger != scheduler.TriggerDryRun || d.Status != scheduler.DigestCompleted {
		t.Fatalf("dry run record: %+v", d)
	}
	h.waitFor("the dry run's file in the thread", 10*time.Second, func() bool {
		for _, f := range h.fake.Files()[filesBefore:] {
			if f.ThreadTS == thread && f.Channel == streamChannel {
				return true
			}
		}
		return false
	})
	var summaryInThread bool
	for _, m := range h.botMessages(thread) {
		if strings.HasPrefix(m.Text, "Research ") {
			summaryInThread = true
		}
	}
	if !summaryInThread || len(h.channelDigests()) != 0 {
		t.Errorf("dry run: summary in thread %v, channel digests %d", summaryInThread, len(h.channelDigests()))
	}
	if root := h.fake.Thread(h.channel, thread)[0]; root.Text != "New research stream" {
		t.Errorf("the dry run rewrote the conversation's root message: %q", root.Text)
	}

	// run NAME: a digest now, posted as a new message in the stream's channel.
	h.slash(streamOwner, "stream run Heat Pump Watch")
	h.ephemeralFor(streamOwner, "Started a digest of")
	st = h.digestDone("Heat Pump Watch", 2)
	h.waitFor("the digest in the channel", 10*time.Second, func() bool { return len(h.channelDigests()) == 1 })
	digestMsg := h.channelDigests()[0]
	h.waitFor("the digest's file", 10*time.Second, func() bool {
		for _, f := range h.fake.Files() {
			if f.ThreadTS == digestMsg.TS {
				return true
			}
		}
		return false
	})
	if st.Digests[1].Trigger != scheduler.TriggerRunNow {
		t.Errorf("run-now record: %+v", st.Digests[1])
	}

	// The schedule: at the next fire time, Tick starts one digest.
	next := st.NextFire
	if next.IsZero() {
		t.Fatal("no next fire")
	}
	h.clock.Set(next.Add(time.Minute))
	if err := h.svc.Tick(h.ctx); err != nil {
		t.Fatal(err)
	}
	st = h.digestDone("Heat Pump Watch", 3)
	if d := st.Digests[2]; d.Trigger != scheduler.TriggerSchedule || !d.FireAt.Equal(next) {
		t.Errorf("scheduled digest record: %+v (want fire at %s)", d, next)
	}
	h.waitFor("the scheduled digest in the channel", 10*time.Second, func() bool { return len(h.channelDigests()) == 2 })

	// Another user's pause is refused.
	h.slash(streamOther, "stream pause Heat Pump Watch")
	h.ephemeralFor(streamOther, "who owns the stream")
	if st, _ := h.svc.Show(h.ctx, "Heat Pump Watch"); st.Paused {
		t.Fatal("another user paused the stream")
	}

	// The owner pauses it: the next fire time starts nothing.
	h.slash(streamOwner, "stream pause Heat Pump Watch")
	h.ephemeralFor(streamOwner, "Paused")
	st, _ = h.svc.Show(h.ctx, "Heat Pump Watch")
	if !st.Paused {
		t.Fatal("not paused")
	}
	h.clock.Set(next.Add(24*time.Hour + time.Minute))
	if err := h.svc.Tick(h.ctx); err != nil {
		t.Fatal(err)
	}
	// A pass records a digest it starts before it returns.
	if st, _ = h.svc.Show(h.ctx, "Heat Pump Watch"); len(st.Digests) != 3 || st.Running != "" {
		t.Errorf("a paused stream fired: %d digests, running %q", len(st.Digests), st.Running)
	}

	// show lists the spec, the schedule and the past digests.
	h.slash(streamOwner, "stream show Heat Pump Watch")
	show := h.ephemeralFor(streamOwner, "Past digests")
	for _, want := range []string{"dry run", "run now", "scheduled", "paused"} {
		if !strings.Contains(displayed(show), want) {
			t.Errorf("show lacks %q:\n%s", want, displayed(show))
		}
	}
	h.slash(streamOwner, "stream list")
	h.ephemeralFor(streamOwner, "Research streams")

	// delete asks to confirm; confirming removes the stream.
	h.slash(streamOwner, "stream delete Heat Pump Watch")
	confirm := h.ephemeralFor(streamOwner, "Delete the research stream")
	h.click(streamOwner, confirm, blockkit.ActionStreamDeleteConfirm)
	h.waitFor("the stream to be deleted", 10*time.Second, func() bool {
		_, err := h.svc.Show(h.ctx, "Heat Pump Watch")
		return errors.Is(err, scheduler.ErrStreamNotFound)
	})
	h.ephemeralFor(streamOwner, "Deleted the research stream")

	for _, m := range h.fake.Messages(h.channel) {
		if s := displayed(m); strings.Contains(s, "<!channel>") {
			t.Errorf("a bot message smuggles a mention: %s", s)
		}
	}
	for _, ack := range h.fake.Acks() {
		if ack.Latency >= 3*time.Second {
			t.Errorf("ack after %s", ack.Latency)
		}
	}
}

// TestStreamHeldDraftGoesToOwnerDM: with the hold_draft policy the draft
// review is posted in the owner's direct messages with the app, not in the
// stream's channel; approving it there posts the digest to the channel and
// collapses the DM message.
func TestStreamHeldDraftGoesToOwnerDM(t *testing.T) {
	if testing.Short() {
		t.Skip("a research run")
	}
	h := newStreamsE2E(t)
	spec := scheduler.Spec{
		Channel: streamChannel, Purpose: "Follow heat pumps", BusinessGoals: []string{"Plan"}, ExpectedOutcomes: "Decisions",
		Name: "Held Watch", Type: scheduler.TypeMarket, FocusAreas: []string{"Cold climates"}, Keywords: []string{"heat pump"},
		Frequency: scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}
	if _, err := h.svc.Create(h.ctx, spec, streamOwner); err != nil {
		t.Fatal(err)
	}
	h.slash(streamOwner, "stream policy Held Watch hold_draft")
	h.ephemeralFor(streamOwner, "Policy set to `hold_draft`")
	h.slash(streamOwner, "stream run Held Watch")
	h.ephemeralFor(streamOwner, "Started a digest of")

	dm := slackfake.DMChannelID(streamOwner)
	var draft slackfake.Message
	h.waitFor("the draft review in the owner's DM", 90*time.Second, func() bool {
		for _, m := range h.fake.Messages(dm) {
			if !m.Ephemeral && strings.Contains(string(m.Blocks), blockkit.ActionApprove) {
				draft = m
				return true
			}
		}
		return false
	})
	if draft.ThreadTS != "" {
		t.Errorf("the draft review is in a thread of the DM: %+v", draft)
	}
	for _, m := range h.fake.Messages(h.channel) {
		if strings.Contains(string(m.Blocks), blockkit.ActionApprove) || strings.Contains(m.Text, "decision is needed") {
			t.Fatalf("the held draft was shown in the stream's channel: %s", displayed(m))
		}
	}
	if len(h.channelDigests()) != 0 {
		t.Fatal("the digest was posted before the owner approved it")
	}

	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.ClickButton(ctx, streamOwner, dm, draft.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	// A second click (before the message collapses) is refused, and the
	// explanation appears where the owner clicked: in the DM.
	if _, err := h.fake.ClickButton(ctx, streamOwner, dm, draft.TS, blockkit.ActionApprove, "", ""); err == nil {
		h.waitFor("the double click explained in the DM", 10*time.Second, func() bool {
			for _, m := range h.fake.Messages(dm) {
				// Refused by the store's compare-and-set ("not applied") or,
				// when the first click was recorded before this one was
				// read, by the check before it ("nothing was changed").
				if m.Ephemeral && m.ToUser == streamOwner && (m.Text == "Your decision was not applied" || m.Text == "Nothing was changed") {
					return true
				}
			}
			return false
		})
		for _, m := range h.fake.Messages(h.channel) {
			if m.Ephemeral && (m.Text == "Your decision was not applied" || m.Text == "Nothing was changed") {
				t.Fatal("the notice about the DM draft went to the stream's channel")
			}
		}
	}
	st := h.digestDone("Held Watch", 1)
	if d := st.Digests[0]; d.Status != scheduler.DigestCompleted {
		t.Fatalf("digest record after approval: %+v", d)
	}
	h.waitFor("the digest in the channel", 10*time.Second, func() bool { return len(h.channelDigests()) == 1 })
	h.waitFor("the DM draft to collapse", 10*time.Second, func() bool {
		for _, m := range h.fake.Messages(dm) {
			if m.TS == draft.TS {
				return !strings.Contains(string(m.Blocks), blockkit.ActionApprove)
			}
		}
		return false
	})
}

// TestRetriedThreadReplyAdvancesTheConversationOnce: Slack retries an event
// it saw no ack for (same event_id, retry_attempt 1); the owner's reply
// must move the conversation once, not answer the next question too.
func TestRetriedThreadReplyAdvancesTheConversationOnce(t *testing.T) {
	h := newStreamsE2E(t)
	thread := h.newStream()
	h.nextTurn(thread, 0)
	h.reply(streamOwner, thread, "I want to track heat pump competitors")
	h.nextTurn(thread, 1)
	env, _ := h.fake.LastEnvelope("events_api")
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	if _, err := h.fake.Redeliver(ctx, env.EnvelopeID, "timeout"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the retry to be dropped", 10*time.Second, func() bool {
		return counterValue(t, h.metrics, "researchbot_slack_repeated_deliveries_total", "events_api") == 1
	})
	if n := len(h.convCalls()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
	if n := len(h.botMessages(thread)); n != 2 {
		t.Errorf("%d turns in the thread, want 2:\n%s", n, dumpAll(h.fake, h.channel))
	}
}

// counterValue reads one labelled counter from m's registry (0 when absent).
func counterValue(t *testing.T, m *bot.Metrics, name, label string) float64 {
	t.Helper()
	return bottest.CounterValue(t, m, name, label)
}
