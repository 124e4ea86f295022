package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/researchbot/researchbot/pipeline"
)

// ackDeadline is when an envelope is acked at the latest, whatever its
// handler is doing (Slack's limit is 3 s).
const ackDeadline = 2500 * time.Millisecond

// acker acks one envelope exactly once and records the latency.
type acker struct {
	a        *App
	req      *socketmode.Request
	kind     string
	received time.Time
	once     sync.Once
	mu       sync.Mutex
	timer    *time.Timer
}

func (a *App) newAcker(evt socketmode.Event, kind string) *acker {
	return &acker{a: a, req: evt.Request, kind: kind, received: a.now()}
}

// ack sends the ack (with an optional payload) unless one was sent already;
// it reports whether this call sent it.
func (k *acker) ack(payload any) (sent bool) {
	k.once.Do(func() {
		sent = true
		k.mu.Lock()
		if k.timer != nil {
			k.timer.Stop()
		}
		k.mu.Unlock()
		if k.req == nil {
			return
		}
		// Never block for long: while the connection is being replaced the
		// response queue may be full, and Slack redelivers what was not acked.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := k.a.sm.AckCtx(ctx, k.req.EnvelopeID, payload)
		d := k.a.now().Sub(k.received)
		k.a.metrics.ack(k.kind, d)
		if err != nil {
			k.a.log.Error("bot: ack failed", "kind", k.kind, "err", err)
		}
	})
	return sent
}

// guard acks empty at ackDeadline unless ack was called before.
func (k *acker) guard() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.timer = time.AfterFunc(ackDeadline, func() {
		if k.ack(nil) {
			k.a.log.Warn("bot: handler was slow; acked empty at the deadline", "kind", k.kind)
		}
	})
}

// handle routes one Socket Mode event. It never blocks on slow work.
func (a *App) handle(ctx context.Context, evt socketmode.Event) {
	a.metrics.event(string(evt.Type))
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		a.connected.Store(false)
		a.log.Info("bot: connecting to Slack")
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		if !a.connected.Swap(true) {
			a.log.Info("bot: connected to Slack")
		}
		a.checkSocketApp(evt)
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth, socketmode.EventTypeDisconnect:
		a.connected.Store(false)
		a.log.Warn("bot: Slack connection problem", "event", string(evt.Type), "detail", connDetail(evt))
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage, socketmode.EventTypeErrorWriteFailed:
		a.log.Warn("bot: Socket Mode error", "event", string(evt.Type), "detail", connDetail(evt))
	case socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive, socketmode.EventTypeEventsAPI:
		a.route(evt)
	}
}

// route checks that a request comes from the installation and hands it to
// its handler, which acks it and takes it only if it was not taken before.
func (a *App) route(evt socketmode.Event) {
	d := deliveryOf(evt)
	k := a.newAcker(evt, d.kind)
	o, ok := originOf(evt)
	if !ok {
		k.ack(nil)
		return
	}
	if why := a.install.Load().foreign(o); why != "" {
		a.refuseForeign(k, d, evt, o, why)
		return
	}
	switch data := evt.Data.(type) {
	case slack.SlashCommand:
		a.onSlash(k, d, data)
	case slack.InteractionCallback:
		a.onInteractive(k, d, data)
	case slackevents.EventsAPIEvent:
		k.ack(nil)
		a.onEvent(d, data)
	}
}

// onEvent takes an Events API event. Only a person's reply in a thread can
// belong to a conversation; every other message is dropped here, before it
// takes a place in the pool.
func (a *App) onEvent(d delivery, ev slackevents.EventsAPIEvent) {
	if a.cfg.Messages == nil {
		return
	}
	msg, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok || msg.BotID != "" || msg.SubType != "" || msg.ThreadTimeStamp == "" || msg.ThreadTimeStamp == msg.TimeStamp {
		return
	}
	if !a.pool.submit(func(ctx context.Context) {
		if a.firstDelivery(ctx, d) {
			a.cfg.Messages.HandleMessage(ctx, msg)
		}
	}) {
		a.log.Warn("bot: busy; dropped a thread message", "channel", msg.Channel)
	}
}

// connDetail describes a connection event without secrets.
func connDetail(evt socketmode.Event) string {
	switch d := evt.Data.(type) {
	case *slack.ConnectionErrorEvent:
		return fmt.Sprintf("attempt %d, retry in %s: %v", d.Attempt, d.Backoff, d.ErrorObj)
	case *slack.IncomingEventError:
		return fmt.Sprint(d.ErrorObj)
	case *socketmode.ErrorBadMessage:
		return fmt.Sprint(d.Cause)
	case *socketmode.ErrorWriteFailed:
		return fmt.Sprint(d.Cause)
	}
	return ""
}

// ephemeralPayload is a slash-command ack (or response_url) body shown only
// to the user.
func ephemeralPayload(blocks []slack.Block, text string) map[string]any {
	return map[string]any{"response_type": "ephemeral", "text": text, "blocks": blocks}
}

// onSlash handles /research: usage errors and help are answered in the ack
// itself; everything else is acked at once and done on the pool.
func (a *App) onSlash(k *acker, d delivery, cmd slack.SlashCommand) {
	log := a.log.With("user", cmd.UserID, "channel", cmd.ChannelID)
	c, err := ParseCommand(cmd.Text)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		k.ack(ephemeralPayload(RenderError(ue.Msg, "`/research help` explains every option."), ue.Msg))
		return
	case err != nil:
		k.ack(ephemeralPayload(RenderError("I couldn't read that command.", ""), "error"))
		return
	case c.Kind == CmdHelp:
		k.ack(ephemeralPayload(RenderHelp(), "How to use researchbot"))
		return
	}
	ok := a.pool.submit(func(ctx context.Context) {
		if !a.firstDelivery(ctx, d) {
			return
		}
		switch c.Kind {
		case CmdResearch:
			a.startResearch(ctx, log, cmd, c)
		case CmdStatus:
			a.status(ctx, cmd, c.RunID)
		case CmdList:
			a.list(ctx, cmd)
		case CmdCancel:
			a.askCancel(ctx, cmd, c.RunID)
		case CmdStream:
			a.stream(ctx, cmd, c.Args)
		}
	})
	if !ok {
		log.Warn("bot: busy; refused a command")
		k.ack(ephemeralPayload(RenderError("I'm very busy right now and couldn't take your request.", "Please try again in a minute."), "busy"))
		return
	}
	k.ack(nil)
}

// respond answers a slash command ephemerally through its response_url,
// which works even in channels the bot is not in.
func (a *App) respond(ctx context.Context, cmd slack.SlashCommand, blocks []slack.Block, text string) {
	if cmd.ResponseURL == "" {
		a.ephemeral(ctx, cmd.ChannelID, cmd.UserID, "", blocks, text)
		return
	}
	err := retry429(ctx, func() error {
		_, _, err := a.api.PostMessageContext(ctx, cmd.ChannelID,
			slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeEphemeral), quiet(blocks, text))
		return err
	})
	if err != nil {
		a.log.Error("bot: replying to a command failed", "user", cmd.UserID, "channel", cmd.ChannelID, "err", err)
	}
}

// ephemeral shows a message only to user, in the thread when given.
func (a *App) ephemeral(ctx context.Context, channel, user, thread string, blocks []slack.Block, text string) {
	opts := []slack.MsgOption{quiet(blocks, text)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	err := retry429(ctx, func() error {
		_, err := a.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		a.log.Error("bot: ephemeral message failed", "user", user, "channel", channel, "err", err)
	}
}

// notInChannel are the Web API errors that mean the bot cannot post here.
var notInChannel = map[string]bool{"not_in_channel": true, "channel_not_found": true, "is_archived": true, "restricted_action": true}

// inviteHelp tells a user how to let the bot in.
func inviteHelp(channelID string) []slack.Block {
	what := "I'm not a member of this channel, so I can't post the research thread here."
	todo := "Invite me with `/invite @researchbot` and run the command again."
	if strings.HasPrefix(channelID, "D") {
		what = "I can't post in this conversation."
		todo = "Open researchbot's *Messages* tab and use `/research` there, or run it in a channel I'm in (invite me with `/invite @researchbot`)."
	}
	return RenderError(what, todo)
}

// startResearch rate-limits, posts the root message, creates the run and
// names it in the root message.
func (a *App) startResearch(ctx context.Context, log *slog.Logger, cmd slack.SlashCommand, c Command) {
	if err := a.limiter.allow(ctx, cmd.TeamID, cmd.UserID); err != nil {
		var le *LimitedError
		if errors.As(err, &le) {
			a.metrics.limited(le.Scope)
			a.respond(ctx, cmd, RenderError(limitMessage(le, a.now()), ""), "Rate limited")
			return
		}
		log.Error("bot: rate limiter unavailable", "err", err)
		a.respond(ctx, cmd, RenderError("I couldn't start your research: my storage is not answering.", "Please try again in a few minutes."), "Storage unavailable")
		return
	}
	root := RootInfo{Question: c.Question, RequestedBy: cmd.UserID, Mode: c.Mode, Depth: c.Depth}
	var ts string
	err := retry429(ctx, func() error {
		var err error
		_, ts, err = a.api.PostMessageContext(ctx, cmd.ChannelID, quiet(RenderRoot(root), rootText(root)))
		return err
	})
	if err != nil {
		if notInChannel[slackErrorCode(err)] {
			a.respond(ctx, cmd, inviteHelp(cmd.ChannelID), "Invite me first: /invite @researchbot")
			return
		}
		log.Error("bot: posting the root message failed", "err", err)
		a.respond(ctx, cmd, RenderError("I couldn't post in this channel: "+Escape(slackErrorCode(err))+".", "Please try again in a minute."), "Posting failed")
		return
	}
	run, err := a.engine.Start(ctx, pipeline.Request{
		Question:    c.Question,
		Mode:        c.Mode,
		Depth:       c.Depth,
		RequestedBy: cmd.UserID,
		Origin:      pipeline.Origin{Kind: OriginKind, TeamID: cmd.TeamID, Channel: cmd.ChannelID, ThreadTS: ts},
	})
	if err != nil {
		log.Error("bot: starting a run failed", "err", err)
		blocks := RenderError("I couldn't start this research: "+EscapeTruncate(err.Error(), 500), "Please try again; if it keeps failing, tell whoever runs researchbot.")
		_ = retry429(ctx, func() error {
			_, _, err := a.api.PostMessageContext(ctx, cmd.ChannelID, quiet(blocks, "Could not start"), slack.MsgOptionTS(ts))
			return err
		})
		return
	}
	a.metrics.runStarted()
	log.Info("bot: run started", "run_id", run.ID, "mode", c.Mode, "depth", c.Depth)
	root.RunID, root.Status = run.ID, run.Status
	if err := retry429(ctx, func() error {
		_, _, _, err := a.api.UpdateMessageContext(ctx, cmd.ChannelID, ts, quiet(RenderRoot(root), rootText(root)))
		return err
	}); err != nil {
		log.Warn("bot: naming the run in the root message failed", "run_id", run.ID, "err", err)
	}
}

// latestRun returns the caller's run by id, or their newest (unfinished
// when onlyOpen) run.
func (a *App) latestRun(ctx context.Context, user, runID string, onlyOpen bool) (*pipeline.Run, error) {
	if runID != "" {
		return a.engine.Load(ctx, runID)
	}
	runs, err := a.engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 20})
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if !onlyOpen || !r.Status.Final() {
			return r, nil
		}
	}
	return nil, pipeline.ErrNotFound
}

// status answers /research status [RUN].
func (a *App) status(ctx context.Context, cmd slack.SlashCommand, runID string) {
	r, err := a.latestRun(ctx, cmd.UserID, runID, false)
	if err == nil && !a.mayView(r, cmd) {
		// Whether the run exists is none of the asker's business.
		a.log.Info("bot: status of another's run refused", "user", cmd.UserID, "channel", cmd.ChannelID, "run_id", r.ID)
		err = pipeline.ErrNotFound
	}
	if err != nil {
		a.respond(ctx, cmd, a.runLookupError(err, runID), "No such run")
		return
	}
	a.respond(ctx, cmd, renderStatus(r, a.now()), "Run status")
}

// mayView reports whether the person behind cmd may see r's status: its
// requester, an approver of its channel, or anyone asking in the channel the
// run was started in (who can read its thread anyway).
func (a *App) mayView(r *pipeline.Run, cmd slack.SlashCommand) bool {
	return a.allowed(r, cmd.UserID) || (cmd.ChannelID != "" && cmd.ChannelID == r.Origin.Channel)
}

// runLookupError explains a failed run lookup.
func (a *App) runLookupError(err error, runID string) []slack.Block {
	if errors.Is(err, pipeline.ErrNotFound) {
		if runID == "" {
			return RenderError("You have no research runs.", "Start one with `/research &lt;question&gt;`.")
		}
		return RenderError("I can't find run "+runRef(runID)+".", "`/research list` shows your runs. To research a question that starts with this word, write `/research -- your question`.")
	}
	a.log.Error("bot: loading a run failed", "run_id", runID, "err", err)
	return RenderError("I couldn't load the run right now.", "Please try again in a minute.")
}

// list answers /research list.
func (a *App) list(ctx context.Context, cmd slack.SlashCommand) {
	runs, err := a.engine.List(ctx, pipeline.RunFilter{RequestedBy: cmd.UserID, Limit: 10})
	if err != nil {
		a.respond(ctx, cmd, a.runLookupError(err, ""), "Error")
		return
	}
	a.respond(ctx, cmd, renderList(runs, a.now()), "Your research runs")
}

// askCancel answers /research cancel [RUN] with a confirmation.
func (a *App) askCancel(ctx context.Context, cmd slack.SlashCommand, runID string) {
	r, err := a.latestRun(ctx, cmd.UserID, runID, runID == "")
	if err != nil {
		a.respond(ctx, cmd, a.runLookupError(err, runID), "No such run")
		return
	}
	if !a.allowed(r, cmd.UserID) {
		a.respond(ctx, cmd, notAllowed(r), "Not allowed")
		return
	}
	if r.Status.Final() {
		a.respond(ctx, cmd, RenderError("Run "+runRef(r.ID)+" has already finished ("+statusText(r.Status)+"); there is nothing to cancel.", ""), "Already finished")
		return
	}
	a.respond(ctx, cmd, renderCancelConfirm(r), "Cancel this run?")
}

// stream routes /research stream … to the stream handler.
func (a *App) stream(ctx context.Context, cmd slack.SlashCommand, args string) {
	if a.cfg.Streams == nil {
		a.respond(ctx, cmd, RenderError("Research streams are not enabled on this researchbot.", "Ask whoever runs researchbot to enable them; `/research &lt;question&gt;` works as usual."), "Streams are not enabled")
		return
	}
	reply, err := a.cfg.Streams.HandleStream(ctx, StreamCommand{TeamID: cmd.TeamID, ChannelID: cmd.ChannelID, UserID: cmd.UserID, Args: args, TriggerID: cmd.TriggerID, ResponseURL: cmd.ResponseURL})
	if err != nil {
		a.log.Error("bot: stream command failed", "user", cmd.UserID, "err", err)
		a.respond(ctx, cmd, RenderError("That stream command failed.", "Please try again; `/research help` lists the commands."), "Stream command failed")
		return
	}
	if reply != "" {
		a.respond(ctx, cmd, []slack.Block{section(cutRunes(reply, MaxSectionText))}, "researchbot")
	}
}

// allowed reports whether user may decide r's checkpoints or cancel it.
func (a *App) allowed(r *pipeline.Run, user string) bool {
	return user != "" && (user == r.RequestedBy || a.approvers[r.Origin.Channel][user] || a.approvers["*"][user])
}

// notAllowed explains who may decide.
func notAllowed(r *pipeline.Run) []slack.Block {
	return RenderError("Only "+who(r.RequestedBy)+", who started this research, and this channel's approvers can decide or cancel it.",
		"Nothing was changed. If you should be an approver, ask whoever runs researchbot to add you.")
}
