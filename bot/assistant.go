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

// The assistant panel as the transport keeps it: Slack's AI-app split view,
// where a person opens researchbot beside what they are reading. Its
// people's events (the greeting and suggested prompts, the channel viewed,
// the prompts and questions typed in it, the thread's title) are a feature,
// bot/assistant, plugged in as Config.Assistant (the port Assistant). What
// stays here is what the feature and the Presenter share: the panel's
// threads remembered in SlackMemory with the channel viewed beside them,
// and the assistant.threads calls (AssistantPanel), among them the status
// naming a run's stage while it works, cleared when it waits for a
// decision or posts its report (the Presenter's).
//
// A workspace without Slack's AI-app feature answers the assistant.threads
// calls with an error: AssistantPanel then remembers, per workspace, not to
// make them for a while, and the person sees today's messages and no
// error.

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

// AssistantThread is what is remembered of one assistant thread.
type AssistantThread struct {
	// User is the person whose panel it is.
	User string `json:"user"`
	// Context is the channel the person was viewing when they last opened
	// or moved the panel ("" when none).
	Context string `json:"context,omitempty"`
}

// AssistantPanel makes the assistant.threads calls of the assistant
// panel's feature (bot/assistant) and the Presenter, a run's status once
// per change, and none at all in a workspace that answered with a feature
// error; it remembers the panel's threads in SlackMemory.
type AssistantPanel struct {
	// send makes the calls; it retries 429s.
	send *Sender
	mem  SlackMemory
	log  *slog.Logger

	mu sync.Mutex
	// shown is the status last set per run ("" when cleared), so a status
	// is sent when it changes, not on every progress update.
	shown map[string]string
}

// NewAssistantPanel makes the panel over send, which waits out a 429 on its
// own clock; what it remembers is in mem (shared by every replica), and
// log (nil: discarded) gets its failures.
func NewAssistantPanel(send *Sender, mem SlackMemory, log *slog.Logger) *AssistantPanel {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &AssistantPanel{send: send, mem: mem, log: log, shown: map[string]string{}}
}

// Thread returns the assistant thread at channel and ts, if it is one.
func (p *AssistantPanel) Thread(ctx context.Context, channel, ts string) (AssistantThread, bool) {
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
func recallAssistantThread(ctx context.Context, mem AssistantThreads, channel, ts string) (AssistantThread, bool, error) {
	var t AssistantThread
	if channel == "" || ts == "" {
		return t, false, nil
	}
	v, found, err := mem.AssistantThread(ctx, channel, ts)
	if err != nil || !found || json.Unmarshal([]byte(v), &t) != nil {
		return AssistantThread{}, false, err
	}
	return t, true, nil
}

// ViewedChannel returns the channel the person was viewing beside the
// assistant panel when they last opened or moved it, for the assistant
// thread at channel and ts: "" when none, or when that is no assistant
// thread (an error is mem's). bot/assistant remembers it in mem; a feature
// answering in the panel (sharing a report) reads it with this.
func ViewedChannel(ctx context.Context, mem AssistantThreads, channel, ts string) (string, error) {
	t, _, err := recallAssistantThread(ctx, mem, channel, ts)
	return t.Context, err
}

// Remember records t as the assistant thread at channel and ts.
func (p *AssistantPanel) Remember(ctx context.Context, channel, ts string, t AssistantThread) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return p.mem.RememberAssistantThread(ctx, channel, ts, string(b), MessageKeyTTL)
}

// call makes one assistant.threads call for team unless the workspace is
// known to have no AI-app feature; a feature error is remembered, any
// other failure logged. Nothing is shown to anyone either way.
func (p *AssistantPanel) call(ctx context.Context, team, method string, fn func() error) bool {
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

// Prompts sets the suggested prompts of a new assistant thread.
func (p *AssistantPanel) Prompts(ctx context.Context, team, channel, ts string) {
	params := slack.AssistantThreadsSetSuggestedPromptsParameters{Title: blockkit.AssistantPromptsTitle, ChannelID: channel, ThreadTS: ts}
	for _, pr := range blockkit.AssistantPrompts() {
		params.AddPrompt(pr.Title, pr.Message)
	}
	p.call(ctx, team, "assistant.threads.setSuggestedPrompts", func() error {
		return p.send.SetSuggestedPrompts(ctx, params)
	})
}

// Title names an assistant thread.
func (p *AssistantPanel) Title(ctx context.Context, team, channel, ts, title string) {
	p.call(ctx, team, "assistant.threads.setTitle", func() error {
		return p.send.SetThreadTitle(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: channel, ThreadTS: ts, Title: title})
	})
}

// Status sets (or, with "", clears) the status of an assistant thread.
func (p *AssistantPanel) Status(ctx context.Context, team, channel, ts, status string, loading []string) bool {
	return p.call(ctx, team, "assistant.threads.setStatus", func() error {
		return p.send.SetThreadStatus(ctx, slack.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: ts, Status: status, LoadingMessages: loading})
	})
}

// runStatus shows in r's assistant thread (when it has one) what r is
// doing: its stage while it works, nothing once it waits or has ended.
// Only a change is sent (as this replica knows it: a status another
// replica or the App set is cleared all the same, as the first thing this
// one sends for the run is sent).
func (p *AssistantPanel) runStatus(ctx context.Context, r *pipeline.Run) {
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
	if _, ok := p.Thread(ctx, r.Origin.Channel, r.Origin.ThreadTS); !ok {
		return
	}
	p.Status(ctx, r.Origin.TeamID, r.Origin.Channel, r.Origin.ThreadTS, status, loading)
}

// maxShownStatuses bounds the runs whose last status is kept.
const maxShownStatuses = 10000

// Assistant is the assistant panel as the transport sees it (bot/assistant's
// Feature, which the assembly plugs in as Config.Assistant): it registers
// the panel's events (assistant_thread_started and
// assistant_thread_context_changed, whose thread is Request.Assistant), and
// is asked first about what a person says in a direct-message thread.
type Assistant interface {
	Registrar
	// HandlePanelMessage takes m, said in the direct-message thread of
	// req, when that is an assistant thread without a run yet; it reports
	// false to pass m on (to converse: a stream's conversation, a run's
	// thread).
	HandlePanelMessage(ctx context.Context, req *Request, m Mention) (taken bool, err error)
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
