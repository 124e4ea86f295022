package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/researchbot/researchbot/bot/blockkit"
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
	timer    *quartz.Timer
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
	k.timer = k.a.clock.AfterFunc(ackDeadline, func() {
		if k.ack(nil) {
			k.a.log.Warn("bot: handler was slow; acked empty at the deadline", "kind", k.kind)
		}
	}, "bot", "ackguard")
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
	case socketmode.EventTypeInvalidAuth:
		a.connected.Store(false)
		a.refuse(appTokenRefused(errors.New("invalid_auth")))
	case socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect:
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

// fileShare is the subtype of a person's message that shares files.
const fileShare = "file_share"

// onEvent takes an Events API event to its route. Only a person's reply in
// a thread can belong to a conversation; every other message is dropped
// here, before it takes a place in the pool.
func (a *App) onEvent(d delivery, ev slackevents.EventsAPIEvent) {
	h := a.routes.event(ev.InnerEvent.Type)
	if h == nil {
		return
	}
	req := &Request{TeamID: ev.TeamID, Log: a.log, send: a.send, app: a}
	if msg, ok := ev.InnerEvent.Data.(*slackevents.MessageEvent); ok {
		if msg.BotID != "" || (msg.SubType != "" && msg.SubType != fileShare) || msg.ThreadTimeStamp == "" || msg.ThreadTimeStamp == msg.TimeStamp {
			return
		}
		req.UserID, req.Channel, req.Thread, req.Message = msg.User, msg.Channel, msg.ThreadTimeStamp, msg
		req.ActionToken = actionTokenOf(msg.ActionToken, msg.AssistantThread)
		req.Log = a.log.With("user", msg.User, "channel", msg.Channel)
	} else if home, ok := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent); ok {
		if home.Tab != "home" {
			return
		}
		req.UserID, req.Log = home.User, a.log.With("user", home.User)
	} else if m, ok := ev.InnerEvent.Data.(*slackevents.AppMentionEvent); ok {
		if m.BotID != "" || m.User == "" {
			return
		}
		req.UserID, req.Channel, req.Thread, req.Mention = m.User, m.Channel, m.ThreadTimeStamp, m
		req.ActionToken = actionTokenOf(m.ActionToken, m.AssistantThread)
		req.Log = a.log.With("user", m.User, "channel", m.Channel)
	} else if t := assistantThreadOf(ev.InnerEvent.Data); t != nil {
		req.UserID, req.Channel, req.Thread, req.Assistant = t.UserID, t.ChannelID, t.ThreadTimeStamp, t
		req.Log = a.log.With("user", t.UserID, "channel", t.ChannelID)
	} else if ev.InnerEvent.Type == string(slackevents.Message) || ev.InnerEvent.Type == string(slackevents.AppMention) {
		return
	}
	if !a.pool.submit(func(ctx context.Context) {
		if a.firstDelivery(ctx, d) {
			a.serve(ctx, h, req)
		}
	}) {
		a.log.Warn("bot: busy; dropped an event", "type", ev.InnerEvent.Type, "channel", req.Channel)
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
// itself; everything else is acked at once and done on the pool by its route.
func (a *App) onSlash(k *acker, d delivery, cmd slack.SlashCommand) {
	log := a.log.With("user", cmd.UserID, "channel", cmd.ChannelID)
	c, err := ParseCommand(cmd.Text)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		k.ack(ephemeralPayload(blockkit.RenderError(ue.Msg, "`/research help` explains every option."), ue.Msg))
		return
	case err != nil:
		k.ack(ephemeralPayload(blockkit.RenderError("I couldn't read that command.", ""), "error"))
		return
	case c.Kind == CmdHelp:
		k.ack(ephemeralPayload(blockkit.RenderHelp(), "How to use researchbot"))
		return
	}
	h := a.routes.command(c.Kind)
	if h == nil {
		log.Warn("bot: no route for a command", "kind", c.Kind)
		k.ack(ephemeralPayload(blockkit.RenderError("I couldn't read that command.", ""), "error"))
		return
	}
	req := &Request{
		UserID: cmd.UserID, TeamID: cmd.TeamID, Channel: cmd.ChannelID,
		TriggerID: cmd.TriggerID, ResponseURL: cmd.ResponseURL,
		Command: &cmd, Parsed: c, Log: log, send: a.send, app: a,
	}
	ok := a.pool.submit(func(ctx context.Context) {
		if a.firstDelivery(ctx, d) {
			a.serve(ctx, h, req)
		}
	})
	if !ok {
		log.Warn("bot: busy; refused a command")
		k.ack(ephemeralPayload(blockkit.RenderError("I'm very busy right now and couldn't take your request.", "Please try again in a minute."), "busy"))
		return
	}
	k.ack(nil)
}

// registerRoutes fills the App's routing table: its own commands, buttons
// and forms, the streams and the App Home when configured, and every feature
// in cfg.Features.
func (a *App) registerRoutes() {
	r := a.routes
	r.Command(CmdResearch, a.startResearch)
	r.Command(CmdStatus, a.status)
	r.Command(CmdList, a.list)
	r.Command(CmdCancel, a.askCancel)
	r.Command(CmdStream, a.stream)
	a.registerConversation(r)
	r.Action(blockkit.ActionCancelConfirm, a.confirmCancel)
	r.Action(blockkit.ActionCancelAbort, func(ctx context.Context, req *Request) error {
		req.ReplaceOriginal = true
		req.Reply(ctx, []slack.Block{blockkit.Section("OK — the run keeps going.")}, "Not cancelled")
		return nil
	})
	if a.cfg.Streams.Handler != nil {
		a.cfg.Streams.Handler.Register(r)
	}
	if a.cfg.Home != nil {
		a.cfg.Home.Register(r)
	}
	if a.cfg.Assistant != nil {
		a.cfg.Assistant.Register(r)
	}
	if a.cfg.Messages != nil {
		r.Event(string(slackevents.Message), func(ctx context.Context, req *Request) error {
			return a.cfg.Messages.HandleMessage(ctx, req.Message)
		})
	}
	for _, f := range a.cfg.Features {
		f.Register(r)
	}
}

// notInChannel are the Web API errors that mean the bot cannot post here.
var notInChannel = map[string]bool{"not_in_channel": true, "channel_not_found": true, "is_archived": true, "restricted_action": true}

// NotInChannel reports whether err, from a Web API call posting in a
// channel, means the bot cannot post there (not a member, the channel gone
// or archived, posting restricted): a feature then answers with
// blockkit.RenderInviteHelp instead of a failure.
func NotInChannel(err error) bool { return notInChannel[SlackErrorCode(err)] }

// startResearch rate-limits, stores the run held (pipeline.Request.Held),
// posts the root message naming it, and lets the run go on in its thread.
// The run is stored before anything a kill could lose: a process killed
// from then on leaves a held run, which another process finishes starting
// (heldruns.go), and the root message is posted once (postOnce).
func (a *App) startResearch(ctx context.Context, req *Request) error {
	cmd, c, log := req.Command, req.Parsed, req.Log
	if err := a.limiter.allow(ctx, cmd.TeamID, cmd.UserID); err != nil {
		var le *LimitedError
		if errors.As(err, &le) {
			a.metrics.Limited(le.Scope)
			return Tell(blockkit.RenderError(limitMessage(le, a.now()), ""), "Rate limited")
		}
		log.Error("bot: rate limiter unavailable", "err", err)
		return Tell(blockkit.RenderError("I couldn't start your research: my storage is not answering.", "Please try again in a few minutes."), "Storage unavailable")
	}
	files, fileProblems := a.readStartFiles(ctx, c.Files, cmd.UserID, cmd.ChannelID)
	id := pipeline.NewRunID()
	if err := a.cfg.Memory.HoldRun(ctx, id, a.now(), heldClaimTTL); err != nil {
		log.Error("bot: recording a new run failed", "err", err)
		return Tell(blockkit.RenderError("I couldn't start your research: my storage is not answering.", "Please try again in a few minutes."), "Storage unavailable")
	}
	run, err := a.engine.Start(ctx, pipeline.Request{
		ID:       id,
		Held:     true,
		Question: c.Question,
		Mode:     c.Mode,
		Depth:    c.Depth,
		ReviewSources: c.ReviewSources || slices.Contains(a.cfg.Checkpoints.ReviewSources, cmd.ChannelID) ||
			slices.Contains(a.cfg.Checkpoints.ReviewSources, "*"),
		RequestedBy: cmd.UserID,
		Origin:      pipeline.Origin{Kind: OriginKind, TeamID: cmd.TeamID, Channel: cmd.ChannelID, ThreadTS: c.ThreadTS},
		Limits:      pipeline.Limits{MaxCostUSD: c.BudgetUSD},
		FollowUpOf:  c.FollowUpOf,
		Domains:     a.withChannelNever(ctx, cmd.ChannelID, c.Domains),
		Files:       files,
		Audience:    audienceOf(cmd.ChannelID, cmd.UserID),
		PersonToken: a.personToken(req),
	})
	if err != nil {
		a.forgetHeld(ctx, id)
		log.Error("bot: starting a run failed", "err", err)
		return Tell(blockkit.RenderError("I couldn't start this research: "+blockkit.EscapeTruncate(err.Error(), 500), "Please try again; if it keeps failing, tell whoever runs researchbot."), "Could not start")
	}
	if run.ID != id {
		a.forgetHeld(ctx, id) // an engine that names runs itself: nothing to sweep under id
	}
	thread, err := a.showHeld(ctx, run, log)
	if errors.Is(err, errStartLater) {
		return Tell(blockkit.RenderError("Slack didn't confirm my post of your request, so I'm checking it; the research starts in its thread in a moment.", "No need to ask again."), "Starting in a moment")
	}
	if err != nil {
		if NotInChannel(err) {
			return Tell(blockkit.RenderInviteHelp(cmd.ChannelID), "Invite me first: /invite @researchbot")
		}
		return Tell(blockkit.RenderError("I couldn't post in this channel: "+blockkit.Escape(SlackErrorCode(err))+".", "Please try again in a minute."), "Posting failed")
	}
	if thread == "" {
		return nil // released elsewhere, or left for the sweep (logged)
	}
	a.metrics.runStarted()
	log.Info("bot: run started", "run_id", run.ID, "mode", c.Mode, "depth", c.Depth)
	a.tellFileProblems(ctx, cmd.ChannelID, thread, fileProblems, "The research goes on without "+blockkit.ItOrThem(len(fileProblems))+".")
	return nil
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
func (a *App) status(ctx context.Context, req *Request) error {
	cmd, runID := req.Command, req.Parsed.RunID
	r, err := a.latestRun(ctx, cmd.UserID, runID, false)
	if err == nil && !a.mayView(r, cmd) {
		// Whether the run exists is none of the asker's business.
		a.log.Info("bot: status of another's run refused", "user", cmd.UserID, "channel", cmd.ChannelID, "run_id", r.ID)
		err = pipeline.ErrNotFound
	}
	if err != nil {
		return Tell(a.runLookupError(err, runID), "No such run")
	}
	req.Reply(ctx, blockkit.RenderStatus(r, a.now()), "Run status")
	return nil
}

// mayView reports whether the person behind cmd may see r's status: its
// requester, an approver of its channel, or anyone asking in the channel the
// run was started in (who can read its thread anyway).
func (a *App) mayView(r *pipeline.Run, cmd *slack.SlashCommand) bool {
	return a.allowed(r, cmd.UserID) || (cmd.ChannelID != "" && cmd.ChannelID == r.Origin.Channel)
}

// runLookupError explains a failed run lookup.
func (a *App) runLookupError(err error, runID string) []slack.Block {
	if errors.Is(err, pipeline.ErrNotFound) {
		return blockkit.RenderRunNotFound(runID)
	}
	a.log.Error("bot: loading a run failed", "run_id", runID, "err", err)
	return blockkit.RenderError("I couldn't load the run right now.", "Please try again in a minute.")
}

// list answers /research list.
func (a *App) list(ctx context.Context, req *Request) error {
	runs, err := a.engine.List(ctx, pipeline.RunFilter{RequestedBy: req.UserID, Limit: 10})
	if err != nil {
		return Tell(a.runLookupError(err, ""), "Error")
	}
	req.Reply(ctx, blockkit.RenderList(runs, a.now()), "Your research runs")
	return nil
}

// askCancel answers /research cancel [RUN] with a confirmation.
func (a *App) askCancel(ctx context.Context, req *Request) error {
	runID := req.Parsed.RunID
	r, err := a.latestRun(ctx, req.UserID, runID, runID == "")
	if err != nil {
		return Tell(a.runLookupError(err, runID), "No such run")
	}
	if !a.allowed(r, req.UserID) {
		return Tell(notAllowed(r), "Not allowed")
	}
	if r.Status.Final() {
		return Tell(blockkit.RenderError("Run "+blockkit.RunRef(r.ID)+" has already finished ("+blockkit.StatusText(r.Status)+"); there is nothing to cancel.", ""), "Already finished")
	}
	req.Reply(ctx, blockkit.RenderCancelConfirm(r), "Cancel this run?")
	return nil
}

// stream hands /research stream … to the stream handler.
func (a *App) stream(ctx context.Context, req *Request) error {
	if a.cfg.Streams.Handler == nil {
		return Tell(blockkit.RenderError("Research streams are not enabled on this researchbot.", "Ask whoever runs researchbot to enable them; `/research &lt;question&gt;` works as usual."), "Streams are not enabled")
	}
	cmd := req.Command
	err := a.cfg.Streams.Handler.HandleStream(ctx, StreamCommand{TeamID: cmd.TeamID, ChannelID: cmd.ChannelID, UserID: cmd.UserID, Args: req.Parsed.Args, TriggerID: cmd.TriggerID, ResponseURL: cmd.ResponseURL})
	var ue *UserError
	if err != nil && !errors.As(err, &ue) {
		req.Log.Error("bot: stream command failed", "err", err)
		return Tell(blockkit.RenderError("That stream command failed.", "Please try again; `/research help` lists the commands."), "Stream command failed")
	}
	return err
}

// allowed reports whether user may decide r's checkpoints or cancel it.
func (a *App) allowed(r *pipeline.Run, user string) bool {
	return user != "" && (user == r.RequestedBy || a.approvers[r.Origin.Channel][user] || a.approvers["*"][user])
}

// notAllowed explains who may decide.
func notAllowed(r *pipeline.Run) []slack.Block {
	return blockkit.RenderError("Only "+blockkit.Who(r.RequestedBy)+", who started this research, and this channel's approvers can decide or cancel it.",
		"Nothing was changed. If you should be an approver, ask whoever runs researchbot to add you.")
}
