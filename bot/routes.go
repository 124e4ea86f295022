package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Handler does what one request asks, after the ack, on the bounded pool.
// It answers the person itself when all went well; when it returns an
// error, App.answer tells the person (a *UserError carries the words; any
// other error is logged and answered with a generic, truthful message).
type Handler func(ctx context.Context, req *Request) error

// Request is one thing a person did in Slack, as a Handler sees it: a slash
// command, a click, a form submission or a message event.
type Request struct {
	UserID, TeamID string
	// Channel and Thread are where answers to the person are shown; a
	// handler may move them (see AnswerBeside).
	Channel, Thread string
	// Direct sends answers to the person's direct messages with the app, as
	// messages only they see there, instead of to Channel.
	Direct      bool
	TriggerID   string
	ResponseURL string
	// ReplaceOriginal makes answers replace the clicked message (an
	// ephemeral confirmation) rather than add an ephemeral message.
	ReplaceOriginal bool

	Command  *slack.SlashCommand          // slash commands
	Parsed   Command                      // slash commands: what the text asks for
	Callback *slack.InteractionCallback   // clicks and form submissions
	Action   *slack.BlockAction           // clicks
	Message  *slackevents.MessageEvent    // message events
	Mention  *slackevents.AppMentionEvent // app_mention events
	// Assistant is the thread of assistant_thread_started and
	// assistant_thread_context_changed events.
	Assistant *slackevents.AssistantThread
	// ActionToken is the short-lived permission Slack sent with the
	// person's message event to search on their behalf (see
	// actionTokenOf); "" when none came. Never logged.
	ActionToken string

	Log *slog.Logger

	send *Sender
	// app is the App serving the request (CheckCheckpoint asks it).
	app *App
	// span is the trace span a handler joined the request to (a person's
	// decision, see App.traceDecision); nil when none. App.serve answers
	// within it and then ends it.
	span *requestSpan
	// ack answers a form submission (field errors, a replaced view); it
	// reports false when the ack was sent already. nil for other requests.
	ack func(payload any) bool
}

// Reply shows blocks to the person who made the request, ephemerally: through
// the command's response_url, in place of the clicked message
// (ReplaceOriginal), or as an ephemeral message at Channel and Thread.
func (r *Request) Reply(ctx context.Context, blocks []slack.Block, text string) {
	switch {
	case r.Direct && r.UserID != "":
		if _, err := r.send.Post(ctx, r.UserID, "", blocks, text); err != nil {
			r.Log.Error("bot: answering in direct messages failed", "err", err)
		}
	case r.Command != nil:
		r.send.Respond(ctx, r.ResponseURL, r.Channel, r.UserID, blocks, text)
	case r.ReplaceOriginal && r.Callback != nil:
		r.send.ReplaceOriginal(ctx, *r.Callback, blocks, text)
	case r.Channel != "" && r.UserID != "":
		r.send.Ephemeral(ctx, r.Channel, r.UserID, r.Thread, blocks, text)
	default:
		r.Log.Warn("bot: nowhere to answer a request", "text", text)
	}
}

// CheckCheckpoint loads the run of checkpoint instID and checks, by the
// App's rules, that the person who made the request may decide it now:
// they asked for the run or approve in its channel, the checkpoint is not
// decided and is the one the run waits on (a click on a checkpoint the
// store lost offers the run's current one again). When they may not, it
// returns why, written for them (run is nil when none was found). A
// feature acting on a checkpoint (its buttons and forms, bot/decisions;
// never use a site at the source review) asks this before it changes
// anything.
func (r *Request) CheckCheckpoint(ctx context.Context, instID string) (run *pipeline.Run, problem []slack.Block) {
	if r.app == nil {
		return nil, blockkit.RenderError("This button doesn't belong to any research run I know.", "Nothing was changed.")
	}
	run, _, problem = r.app.check(ctx, instID, r.UserID)
	return run, problem
}

// MayDecide reports, by the App's rule, whether the person who made the
// request may decide run's checkpoints or cancel it: they asked for it or
// approve in its channel. A feature acting on a run for its people
// (steering it) asks this.
func (r *Request) MayDecide(run *pipeline.Run) bool {
	return r.app != nil && r.app.allowed(run, r.UserID)
}

// Decide records d, a decision of the person who made the request, on
// checkpoint instID of run, the App's way: the engine decides, the
// decision is a span of the run's trace when tracing is on (the context
// returned carries it, for the Slack calls made for the decision), and
// when it was not recorded the error returned says why, written for the
// person (a Tell: already decided, no longer current, lost, the store's
// answer unknown…). A feature deciding a checkpoint calls it: its buttons
// and forms (bot/decisions) after Request.CheckCheckpoint, a clarifying
// question answered by a mention after Request.MayDecide.
func (r *Request) Decide(ctx context.Context, run *pipeline.Run, instID string, d checkpoints.Decision) (context.Context, error) {
	if r.app == nil {
		return ctx, Tell(blockkit.RenderError("This doesn't belong to any research run I know.", "Nothing was changed."), "Nothing was changed")
	}
	return r.app.decide(ctx, r, run, instID, d)
}

// StartResearch starts the research c asks for (c.Kind CmdResearch) in
// channel, for the person who made the request, as "/research" would
// there: within their rate limits, in a new thread (in c.ThreadTS when
// set), with r's ActionToken, telling them in r.Thread why it did not
// start. It returns when the run has started or been refused. A feature
// that offers a new research (a follow-up's "Research this", a question in
// the assistant panel) calls it.
func (r *Request) StartResearch(ctx context.Context, channel string, c Command) {
	if r.app == nil {
		r.Log.Warn("bot: a research started outside an App was dropped")
		return
	}
	a := r.app
	start := &Request{
		UserID: r.UserID, TeamID: r.TeamID, Channel: channel, Thread: r.Thread,
		Command: &slack.SlashCommand{TeamID: r.TeamID, ChannelID: channel, UserID: r.UserID},
		Parsed:  c, Log: r.Log, send: a.send, app: a, ActionToken: r.ActionToken,
	}
	a.serve(ctx, a.startResearch, start)
}

// AnswerBeside makes answers go where run's checkpoint messages are: its
// thread, or the person's direct messages with the app when its
// checkpoints are private (see checkpointPlace, the Presenter's rule). A
// form submission about a run needs it: Slack does not say where the form
// was opened from.
func (r *Request) AnswerBeside(run *pipeline.Run) {
	if run.Origin.Direct {
		r.Channel, r.Thread, r.Direct = "", "", true
		return
	}
	r.Channel, r.Thread = run.Origin.Channel, run.Origin.ThreadTS
}

// Ack acks a form submission with payload and reports whether this call
// sent the ack (false when it was sent already, e.g. at the deadline).
func (r *Request) Ack(payload any) bool {
	if r.ack == nil {
		return false
	}
	return r.ack(payload)
}

// UserError is an error written for the person who made the request: the
// blocks (and the notification text) are shown to them as they are.
type UserError struct {
	Blocks []slack.Block
	Text   string
}

// Error returns the notification text.
func (e *UserError) Error() string { return e.Text }

// Tell returns a *UserError showing blocks, with text as the notification:
// what a handler (the App's or a feature's) returns when it cannot do what
// was asked and has written why for the person who asked. App.answer shows
// it to them alone (in the form, or ephemerally).
func Tell(blocks []slack.Block, text string) error { return &UserError{Blocks: blocks, Text: text} }

// genericProblem answers an error no handler explained: it says only what is
// known — the request was not finished — and the log has the cause.
func genericProblem() ([]slack.Block, string) {
	return blockkit.RenderError("Something went wrong on my side, so I couldn't finish that.", "Please try again in a minute; if it keeps failing, tell whoever runs researchbot."), "Something went wrong"
}

// answer is the one place a handler's error becomes what the person sees.
// A form submission not acked yet is answered in the form; everything else
// ephemerally (Request.Reply).
func (a *App) answer(ctx context.Context, req *Request, err error) {
	if err == nil {
		return
	}
	blocks, text := a.explain(req, err)
	if req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blocks))) {
		return
	}
	req.Reply(ctx, blocks, text)
}

// explain is what the person who made req is told of err, a handler's
// error: a *UserError's words, or a generic, truthful message (and the
// cause logged).
func (a *App) explain(req *Request, err error) ([]slack.Block, string) {
	var ue *UserError
	if errors.As(err, &ue) {
		return ue.Blocks, ue.Text
	}
	req.Log.Error("bot: request failed", "err", err)
	return genericProblem()
}

// serve runs h for req and answers its error, within the span h joined
// the request to, if any (the answer is one of its Slack calls), which it
// then ends.
func (a *App) serve(ctx context.Context, h Handler, req *Request) {
	err := h(ctx, req)
	if s := req.span; s != nil {
		a.answer(s.ctx, req, err)
		s.end(s.err)
		return
	}
	a.answer(ctx, req, err)
}

// Routes maps what a person did to its Handler: slash subcommands, action ids
// (exact, or by prefix for families of buttons), form callback ids and
// Events API event types. Register routes before App.Run; registering the
// same key twice is a programming error and panics, as net/http does.
type Routes struct {
	commands map[CommandKind]Handler
	actions  map[string]Handler
	prefixes []prefixRoute // longest prefix first
	views    map[string]Handler
	events   map[string]Handler
	// forms are the clicks that open a form on the fast path (forms.go).
	forms map[string]formRoute
	// shortcuts are the global and message shortcuts, by callback id.
	shortcuts map[string]Handler
}

type prefixRoute struct {
	prefix string
	h      Handler
}

// Registrar adds routes; features in their own packages (bot/decisions,
// bot/feedback, bot/neverdomain, bot/share, bot/start, bot/followups,
// bot/streams, bot/home, bot/assistant) implement it and are listed in
// Config.Features (streams through Config.Streams, the App Home through
// Config.Home, the assistant panel through Config.Assistant).
type Registrar interface {
	Register(r *Routes)
}

// NewRoutes returns an empty table.
func NewRoutes() *Routes {
	return &Routes{commands: map[CommandKind]Handler{}, actions: map[string]Handler{}, views: map[string]Handler{}, events: map[string]Handler{}, shortcuts: map[string]Handler{}, forms: map[string]formRoute{}}
}

func register[K comparable](m map[K]Handler, what string, k K, h Handler) {
	if h == nil {
		panic(fmt.Sprintf("bot: nil handler for %s %v", what, k))
	}
	if _, dup := m[k]; dup {
		panic(fmt.Sprintf("bot: two handlers for %s %v", what, k))
	}
	m[k] = h
}

// Command routes a /research subcommand.
func (r *Routes) Command(kind CommandKind, h Handler) { register(r.commands, "command", kind, h) }

// Action routes clicks on the action id id.
func (r *Routes) Action(id string, h Handler) { register(r.actions, "action", id, h) }

// ActionPrefix routes clicks on every action id starting with prefix that
// has no exact route; the longest matching prefix wins.
func (r *Routes) ActionPrefix(prefix string, h Handler) {
	if h == nil || prefix == "" {
		panic("bot: an action prefix route needs a prefix and a handler")
	}
	for _, p := range r.prefixes {
		if p.prefix == prefix {
			panic("bot: two handlers for action prefix " + prefix)
		}
	}
	r.prefixes = append(r.prefixes, prefixRoute{prefix, h})
	slices.SortStableFunc(r.prefixes, func(x, y prefixRoute) int { return len(y.prefix) - len(x.prefix) })
}

// View routes the submissions of forms with callback id id.
func (r *Routes) View(callbackID string, h Handler) { register(r.views, "view", callbackID, h) }

// Event routes Events API events of the inner type typ ("message", …).
func (r *Routes) Event(typ string, h Handler) { register(r.events, "event", typ, h) }

// Shortcut routes the global or message shortcut callbackID (the
// manifest's callback_id). Its Request carries the shortcut's Callback and
// TriggerID; the handler checks the callback's type if it cares.
func (r *Routes) Shortcut(callbackID string, h Handler) {
	register(r.shortcuts, "shortcut", callbackID, h)
}

func (r *Routes) shortcut(callbackID string) Handler { return r.shortcuts[callbackID] }

func (r *Routes) command(kind CommandKind) Handler { return r.commands[kind] }

func (r *Routes) action(id string) Handler {
	if h, ok := r.actions[id]; ok {
		return h
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(id, p.prefix) {
			return p.h
		}
	}
	return nil
}

func (r *Routes) view(callbackID string) Handler { return r.views[callbackID] }

func (r *Routes) event(typ string) Handler { return r.events[typ] }
