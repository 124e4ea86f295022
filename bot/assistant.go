package bot

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// The assistant panel: Slack's AI-app split view, where a person opens
// researchbot beside what they are reading. Slack starts an assistant
// thread in the person's direct messages with the app
// (assistant_thread_started); the bot greets them and suggests prompts, and
// remembers the thread with the channel the person is viewing (updated by
// assistant_thread_context_changed). A message in that thread is a research
// question: the run, its checkpoints, progress and report live in the
// thread (followup.go's rules apply once it has a run). The thread is
// titled after the question, and while the run works the panel shows a
// status naming its stage, cleared when it waits for a decision or posts
// its report (the Presenter, through assistantPanel).
//
// A workspace without Slack's AI-app feature answers the assistant.threads
// calls with an error: the bot then remembers, per workspace, not to make
// them for a while, and the person sees today's messages and no error.

// What the assistant panel remembers (SlackMemory.AssistantThread,
// SlackMemory.AssistantOff) is kept for these.
const (
	// assistantOffTTL is how long a workspace answered with a feature error
	// is not asked again (a workspace may get the feature later).
	assistantOffTTL = 24 * time.Hour
)

// assistantFeatureErrors are the Web API errors that mean the workspace (or
// the installation) cannot use the assistant.threads methods: the feature
// is not on its plan, or the app was installed before it asked for
// assistant:write.
var assistantFeatureErrors = map[string]bool{
	"feature_not_enabled": true, "not_allowed": true, "access_denied": true,
	"missing_scope": true, "not_allowed_token_type": true, "team_not_allowed": true,
}

// assistantThread is what is remembered of one assistant thread.
type assistantThread struct {
	User string `json:"user"`
	// Context is the channel the person was viewing when they last opened
	// or moved the panel ("" when none).
	Context string `json:"context,omitempty"`
}

// assistantPanel makes the assistant.threads calls of the App and the
// Presenter, once per status change, and not at all in a workspace that
// answered with a feature error.
type assistantPanel struct {
	// send makes the calls; it retries 429s.
	send *Sender
	mem  SlackMemory
	log  *slog.Logger

	mu sync.Mutex
	// shown is the status last set per run ("" when cleared), so a status
	// is sent when it changes, not on every progress update.
	shown map[string]string
}

// newAssistantPanel makes the panel over send, which waits out a 429 on its
// own clock.
func newAssistantPanel(send *Sender, mem SlackMemory, log *slog.Logger) *assistantPanel {
	return &assistantPanel{send: send, mem: mem, log: log, shown: map[string]string{}}
}

// thread returns the assistant thread at channel and ts, if it is one.
func (p *assistantPanel) thread(ctx context.Context, channel, ts string) (assistantThread, bool) {
	t, ok, err := recallAssistantThread(ctx, p.mem, channel, ts)
	if err != nil {
		p.log.Warn("bot: recalling an assistant thread failed", "channel", channel, "err", err)
	}
	return t, ok
}

// AssistantThreads is the part of SlackMemory that keeps the assistant
// panel's threads.
type AssistantThreads interface {
	AssistantThread(ctx context.Context, channel, thread string) (value string, found bool, err error)
}

// recallAssistantThread returns the assistant thread at channel and ts, if
// it is one; an error is mem's.
func recallAssistantThread(ctx context.Context, mem AssistantThreads, channel, ts string) (assistantThread, bool, error) {
	var t assistantThread
	if channel == "" || ts == "" {
		return t, false, nil
	}
	v, found, err := mem.AssistantThread(ctx, channel, ts)
	if err != nil || !found || json.Unmarshal([]byte(v), &t) != nil {
		return assistantThread{}, false, err
	}
	return t, true, nil
}

// ViewedChannel returns the channel the person was viewing beside the
// assistant panel when they last opened or moved it, for the assistant
// thread at channel and ts: "" when none, or when that is no assistant
// thread (an error is mem's). The App remembers it in mem; a feature
// answering in the panel (sharing a report) reads it with this.
func ViewedChannel(ctx context.Context, mem AssistantThreads, channel, ts string) (string, error) {
	t, _, err := recallAssistantThread(ctx, mem, channel, ts)
	return t.Context, err
}

// remember records an assistant thread.
func (p *assistantPanel) remember(ctx context.Context, channel, ts string, t assistantThread) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return p.mem.RememberAssistantThread(ctx, channel, ts, string(b), MessageKeyTTL)
}

// call makes one assistant.threads call for team unless the workspace is
// known to have no AI-app feature; a feature error is remembered, any
// other failure logged. Nothing is shown to anyone either way.
func (p *assistantPanel) call(ctx context.Context, team, method string, fn func() error) bool {
	if team != "" {
		if _, off, err := p.mem.AssistantOff(ctx, team); err == nil && off {
			return false
		}
	}
	err := fn()
	if err == nil {
		return true
	}
	code := SlackErrorCode(err)
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && assistantFeatureErrors[code] && team != "" {
		p.log.Info("bot: this workspace has no assistant panel; using plain messages", "team_id", team, "method", method, "error", code)
		if err := p.mem.RememberAssistantOff(ctx, team, code, assistantOffTTL); err != nil {
			p.log.Warn("bot: remembering a workspace without the assistant panel failed", "err", err)
		}
		return false
	}
	p.log.Warn("bot: an assistant panel call failed", "method", method, "error", code)
	return false
}

// prompts sets the suggested prompts of a new assistant thread.
func (p *assistantPanel) prompts(ctx context.Context, team, channel, ts string) {
	params := slack.AssistantThreadsSetSuggestedPromptsParameters{Title: blockkit.AssistantPromptsTitle, ChannelID: channel, ThreadTS: ts}
	for _, pr := range blockkit.AssistantPrompts() {
		params.AddPrompt(pr.Title, pr.Message)
	}
	p.call(ctx, team, "assistant.threads.setSuggestedPrompts", func() error {
		return p.send.SetSuggestedPrompts(ctx, params)
	})
}

// title names an assistant thread.
func (p *assistantPanel) title(ctx context.Context, team, channel, ts, title string) {
	p.call(ctx, team, "assistant.threads.setTitle", func() error {
		return p.send.SetThreadTitle(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: channel, ThreadTS: ts, Title: title})
	})
}

// status sets (or, with "", clears) the status of an assistant thread.
func (p *assistantPanel) status(ctx context.Context, team, channel, ts, status string, loading []string) bool {
	return p.call(ctx, team, "assistant.threads.setStatus", func() error {
		return p.send.SetThreadStatus(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: ts, Status: status, LoadingMessages: loading})
	})
}

// runStatus shows in r's assistant thread (when it has one) what r is
// doing: its stage while it works, nothing once it waits or has ended.
// Only a change is sent (as this replica knows it: a status another
// replica or the App set is cleared all the same, as the first thing this
// one sends for the run is sent).
func (p *assistantPanel) runStatus(ctx context.Context, r *pipeline.Run) {
	if r.Origin.Kind != OriginKind || r.Origin.ThreadTS == "" {
		return
	}
	status, loading := blockkit.AssistantStatus(r)
	key := status + "\n" + strings.Join(loading, "\n")
	p.mu.Lock()
	last, seen := p.shown[r.ID]
	if r.Status.Final() {
		delete(p.shown, r.ID)
	} else {
		if len(p.shown) >= maxShownStatuses {
			clear(p.shown)
		}
		p.shown[r.ID] = key
	}
	p.mu.Unlock()
	if seen && last == key {
		return // unchanged
	}
	if _, ok := p.thread(ctx, r.Origin.Channel, r.Origin.ThreadTS); !ok {
		return
	}
	p.status(ctx, r.Origin.TeamID, r.Origin.Channel, r.Origin.ThreadTS, status, loading)
}

// maxShownStatuses bounds the runs whose last status is kept.
const maxShownStatuses = 10000

// registerAssistant routes the assistant panel's events.
func (a *App) registerAssistant(r *Routes) {
	r.Event(string(slackevents.AssistantThreadStarted), a.onAssistantStarted)
	r.Event(string(slackevents.AssistantThreadContextChanged), a.onAssistantContext)
}

// onAssistantStarted greets a person who opened the assistant panel,
// suggests prompts, and remembers the thread and what they are viewing.
func (a *App) onAssistantStarted(ctx context.Context, req *Request) error {
	t := req.Assistant
	if err := a.panel.remember(ctx, t.ChannelID, t.ThreadTimeStamp, assistantThread{User: t.UserID, Context: t.Context.ChannelID}); err != nil {
		return err
	}
	if _, err := a.send.Post(ctx, t.ChannelID, t.ThreadTimeStamp, blockkit.RenderAssistantGreeting(), blockkit.AssistantGreetingText); err != nil {
		req.Log.Warn("bot: greeting in the assistant panel failed", "err", err)
	}
	a.panel.prompts(ctx, req.TeamID, t.ChannelID, t.ThreadTimeStamp)
	return nil
}

// onAssistantContext remembers the channel the person now views beside
// the panel.
func (a *App) onAssistantContext(ctx context.Context, req *Request) error {
	t := req.Assistant
	prev, _ := a.panel.thread(ctx, t.ChannelID, t.ThreadTimeStamp)
	prev.User = blockkit.FirstNonEmpty(prev.User, t.UserID)
	prev.Context = t.Context.ChannelID
	return a.panel.remember(ctx, t.ChannelID, t.ThreadTimeStamp, prev)
}

// onAssistantMessage takes a person's message in an assistant thread that
// has no run yet: a suggested prompt is answered, anything else is a
// research question started in the thread (startResearch, as a slash
// command would). It reports false when the thread is not an assistant
// thread, or already has a run (then the message is a follow-up).
func (a *App) onAssistantMessage(ctx context.Context, req *Request, m Mention) (bool, error) {
	if _, ok := a.panel.thread(ctx, m.Channel, m.Thread); !ok {
		return false, nil
	}
	if _, found, err := a.cfg.Memory.RunOfThread(ctx, m.Channel, m.Thread); err != nil || found {
		return false, err
	}
	if a.cfg.Streams.Mentions != nil { // a stream conversation started from the panel
		if taken, err := a.cfg.Streams.Mentions.HandleMention(ctx, m); taken || err != nil {
			return true, err
		}
	}
	switch blockkit.AssistantPromptOf(m.Text) {
	case blockkit.PromptResearch:
		_, err := a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantHowTo(), "Type your question")
		return true, err
	case blockkit.PromptStream:
		return true, a.startStreamInPanel(ctx, req, m)
	case blockkit.PromptPending:
		pending, err := a.pending(ctx, req)
		if err != nil {
			return true, err
		}
		_, err = a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantPending(pending), "Waiting for your decision")
		return true, err
	}
	c, err := ParseCommand(m.Text)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return true, Tell(blockkit.RenderError(ue.Msg, ""), "Not understood")
	case err != nil:
		return true, err
	case c.Kind != CmdResearch:
		_, err := a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantHowTo(), "Type your question")
		return true, err
	}
	c.ThreadTS, c.Files = m.Thread, m.Files
	a.panel.title(ctx, req.TeamID, m.Channel, m.Thread, blockkit.AssistantTitle(c.Question))
	status, loading := blockkit.AssistantStatus(&pipeline.Run{Status: pipeline.StatusRunning, Step: pipeline.StepPlan})
	a.panel.status(ctx, req.TeamID, m.Channel, m.Thread, status, loading)
	start := &Request{
		UserID: m.User, TeamID: req.TeamID, Channel: m.Channel, Thread: m.Thread,
		Command: &slack.SlashCommand{TeamID: req.TeamID, ChannelID: m.Channel, UserID: m.User},
		Parsed:  c, Log: req.Log, send: a.send, app: a, ActionToken: req.ActionToken,
	}
	a.serve(ctx, a.startResearch, start)
	if _, found, err := a.cfg.Memory.RunOfThread(ctx, m.Channel, m.Thread); err == nil && !found {
		a.panel.status(ctx, req.TeamID, m.Channel, m.Thread, "", nil) // not started: startResearch said why
	}
	return true, nil
}

// startStreamInPanel answers the "Start a research stream" prompt: with
// streams enabled and a channel viewed beside the panel, the stream's
// guided conversation starts in the assistant thread, for digests in that
// channel; otherwise it explains /research stream new.
func (a *App) startStreamInPanel(ctx context.Context, req *Request, m Mention) error {
	t, _ := a.panel.thread(ctx, m.Channel, m.Thread)
	if a.cfg.Streams.Handler == nil || t.Context == "" || t.Context == m.Channel {
		_, err := a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantStreamHowTo(), "Research streams")
		return err
	}
	return a.cfg.Streams.Handler.HandleStream(ctx, StreamCommand{TeamID: req.TeamID, ChannelID: t.Context, UserID: m.User, Args: "new", InChannel: m.Channel, InThread: m.Thread})
}

// assistantThreadOf returns the thread of an assistant panel event, or nil.
func assistantThreadOf(data any) *slackevents.AssistantThread {
	switch ev := data.(type) {
	case *slackevents.AssistantThreadStartedEvent:
		return &ev.AssistantThread
	case *slackevents.AssistantThreadContextChangedEvent:
		return &ev.AssistantThread
	}
	return nil
}
