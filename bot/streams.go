package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// StreamService is what the stream commands need of the research-stream
// service (*scheduler.Service).
type StreamService interface {
	Create(ctx context.Context, spec scheduler.Spec, owner string) (*scheduler.Stream, error)
	List(ctx context.Context) ([]*scheduler.Stream, error)
	Show(ctx context.Context, name string) (*scheduler.Stream, error)
	Pause(ctx context.Context, name, actor string, isAdmin bool) (*scheduler.Stream, error)
	Resume(ctx context.Context, name, actor string, isAdmin bool) (*scheduler.Stream, error)
	Delete(ctx context.Context, name, actor string, isAdmin bool) (*scheduler.Stream, error)
	DeleteByID(ctx context.Context, id, actor string, isAdmin bool) (*scheduler.Stream, error)
	SetPolicy(ctx context.Context, name, actor string, isAdmin bool, p scheduler.Policy) (*scheduler.Stream, error)
	RunNow(ctx context.Context, name, actor string, isAdmin bool, opt scheduler.RunOptions) (*pipeline.Run, error)
	Edit(ctx context.Context, id, actor string, isAdmin bool, spec scheduler.Spec) (*scheduler.Stream, error)
	SetDomains(ctx context.Context, name, actor string, isAdmin bool, rules pipeline.DomainRules) (*scheduler.Stream, error)
}

// ConversationStore keeps one stream creation conversation per Slack thread
// (redisstore.Conversations), so any replica can continue it. Writes are
// compare-and-set on the version: ok is false when someone else wrote first.
type ConversationStore interface {
	Create(ctx context.Context, channel, threadTS string, c scheduler.Conversation) (ok bool, err error)
	Get(ctx context.Context, channel, threadTS string) (c scheduler.Conversation, version int64, ok bool, err error)
	Update(ctx context.Context, channel, threadTS string, version int64, c scheduler.Conversation) (newVersion int64, ok bool, err error)
}

// StreamsConfig configures Streams. Service, Conversations, Model and
// Sender (or BotToken) are required.
type StreamsConfig struct {
	// Sender is the Web API client shared with the App; nil makes one
	// from BotToken, APIURL, Metrics and HTTPClient.
	Sender   *Sender
	BotToken string
	// APIURL is the Web API base URL (SLACK_API_URL); "" means Slack's.
	APIURL        string
	Service       StreamService
	Conversations ConversationStore
	// Model proposes the conversation's turns (the LLM; see internal/app).
	Model scheduler.TurnProposer
	// Metrics counts Web API calls; nil means none.
	Metrics    *Metrics
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Clock dates the streams' conversations and lists, and waits out
	// Slack's Retry-After; nil means the real clock.
	Clock quartz.Clock
}

// Streams is the Slack side of research streams: "/research stream …", the
// guided creation conversation in a thread (buttons, checkboxes, Skip,
// answers typed by mentioning the bot in the thread) and the stream
// buttons. Set it as Config.Streams. It keeps no state in memory: the
// conversations live in the ConversationStore.
type Streams struct {
	send  *Sender
	svc   StreamService
	convs ConversationStore
	model scheduler.TurnProposer
	log   *slog.Logger
	clock quartz.Clock
}

var (
	_ StreamHandler = (*Streams)(nil)
)

// NewStreams checks cfg and returns a Streams.
func NewStreams(cfg StreamsConfig) (*Streams, error) {
	var missing []string
	if cfg.BotToken == "" && cfg.Sender == nil {
		missing = append(missing, "the bot token")
	}
	if cfg.Service == nil {
		missing = append(missing, "the stream service")
	}
	if cfg.Conversations == nil {
		missing = append(missing, "a conversation store")
	}
	if cfg.Model == nil {
		missing = append(missing, "a model")
	}
	if len(missing) > 0 {
		return nil, errors.New("bot: streams need " + strings.Join(missing, ", "))
	}
	s := &Streams{
		svc: cfg.Service, convs: cfg.Conversations, model: cfg.Model, log: cfg.Logger, clock: cfg.Clock,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = slog.New(capLogs(s.log.Handler())) // stream clicks and replies carry what people typed
	if s.clock == nil {
		s.clock = quartz.NewReal()
	}
	s.send = senderOr(cfg.Sender, SenderConfig{BotToken: cfg.BotToken, APIURL: cfg.APIURL, Metrics: cfg.Metrics, HTTPClient: cfg.HTTPClient, Logger: cfg.Logger, Clock: s.clock})
	return s, nil
}

// HandleStream handles "/research stream …". Its answers are shown to the
// caller only (through the command's response_url); what it cannot do is
// returned as a *UserError, which App.answer shows the same way. The
// arguments are unescaped first: Slack sends &, < and > as &amp;, &lt; and
// &gt;, and a stream called "R&D" must be found by its name.
func (s *Streams) HandleStream(ctx context.Context, cmd StreamCommand) error {
	verb, rest, _ := strings.Cut(strings.TrimSpace(slackUnescaper.Replace(cmd.Args)), " ")
	verb = strings.ToLower(verb)
	name := strings.TrimSpace(rest)
	if needsName(verb) && name == "" {
		return tell(blockkit.RenderError(fmt.Sprintf("Which stream? Write its name: `/research stream %s NAME`.", blockkit.Escape(verb)), "`/research stream list` shows every stream."), "Which stream?")
	}
	switch verb {
	case "", "help":
		s.respond(ctx, cmd, blockkit.RenderStreamHelp(), "Research streams")
	case "new", "create":
		return s.startConversation(ctx, cmd)
	case "list":
		all, err := s.svc.List(ctx)
		if err != nil {
			return err
		}
		s.respond(ctx, cmd, blockkit.RenderStreamList(all, s.clock.Now()), "Research streams")
	case "show":
		st, err := s.svc.Show(ctx, name)
		if err != nil {
			return tell(s.lookupProblem(err, name), "No such stream")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamShow(st), "Research stream "+blockkit.EscapeTruncate(st.Spec.Name, 100))
	case "pause", "resume":
		op, done := s.svc.Pause, ":double_vertical_bar: Paused"
		if verb == "resume" {
			op, done = s.svc.Resume, ":arrow_forward: Resumed"
		}
		st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) { return op(ctx, name, cmd.UserID, admin) })
		if err != nil {
			return tell(s.changeProblem(ctx, err, name, verb), "Nothing was changed")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamChanged(st, done), "Done")
	case "policy":
		fields := strings.Fields(name)
		if len(fields) < 2 {
			return tell(blockkit.RenderError("Write the stream's name and the policy: `/research stream policy NAME auto|hold_draft`.", "`auto` posts digests straight away; `hold_draft` holds each draft for the owner's approval."), "Which policy?")
		}
		p := scheduler.Policy(strings.ToLower(fields[len(fields)-1]))
		name = strings.Join(fields[:len(fields)-1], " ")
		if !p.Valid() {
			return tell(blockkit.RenderError("The policy must be `auto` or `hold_draft`, not `"+blockkit.EscapeTruncate(string(p), 40)+"`.", ""), "Unknown policy")
		}
		st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) {
			return s.svc.SetPolicy(ctx, name, cmd.UserID, admin, p)
		})
		if err != nil {
			return tell(s.changeProblem(ctx, err, name, "change"), "Nothing was changed")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamChanged(st, "Policy set to `"+string(p)+"` for"), "Done")
	case "domains":
		return s.setDomains(ctx, cmd, name)
	case "edit":
		s.startEdit(ctx, cmd.ChannelID, cmd.UserID, name, func(blocks []slack.Block, text string) { s.respond(ctx, cmd, blocks, text) })
	case "run":
		return s.runNow(ctx, cmd, name)
	case "delete", "remove":
		st, err := s.svc.Show(ctx, name)
		if err != nil {
			return tell(s.lookupProblem(err, name), "No such stream")
		}
		if !st.CanChange(cmd.UserID, false) && !s.isAdmin(ctx, cmd.UserID) {
			return tell(blockkit.RenderStreamNotAllowed(st, "delete"), "Not allowed")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamDeleteConfirm(st), "Delete this stream?")
	default:
		return tell(blockkit.RenderError("I don't know `/research stream "+blockkit.EscapeTruncate(verb, 40)+"`.", "`/research stream help` lists the stream commands."), "Unknown stream command")
	}
	return nil
}

// needsName reports whether a stream command takes a stream name.
func needsName(verb string) bool {
	switch verb {
	case "show", "edit", "pause", "resume", "run", "delete", "remove", "policy", "domains":
		return true
	}
	return false
}

// runNow starts a digest of the named stream now, posted to its channel.
func (s *Streams) runNow(ctx context.Context, cmd StreamCommand, name string) error {
	var run *pipeline.Run
	st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) {
		var err error
		run, err = s.svc.RunNow(ctx, name, cmd.UserID, admin, scheduler.RunOptions{})
		if err != nil {
			return nil, err
		}
		return s.svc.Show(ctx, name)
	})
	if err != nil {
		return tell(s.changeProblem(ctx, err, name, "run"), "No digest started")
	}
	s.respond(ctx, cmd, []slack.Block{blockkit.Section(fmt.Sprintf(":gear: Started a digest of *%s* (run %s); I'll post it in %s.",
		blockkit.EscapeTruncate(st.Spec.Name, 100), blockkit.RunRef(run.ID), blockkit.ChannelRef(st.Spec.Channel)))}, "Digest started")
	return nil
}

// asOwnerOrAdmin calls op as a plain user first and, when the service says
// only the owner or an admin may, again as an admin if the user is one.
func (s *Streams) asOwnerOrAdmin(ctx context.Context, user string, op func(admin bool) (*scheduler.Stream, error)) (*scheduler.Stream, error) {
	st, err := op(false)
	if errors.Is(err, scheduler.ErrNotAllowed) && s.isAdmin(ctx, user) {
		return op(true)
	}
	return st, err
}

// isAdmin reports whether user is a workspace admin or owner (users.info).
func (s *Streams) isAdmin(ctx context.Context, user string) bool {
	return workspaceAdmin(ctx, s.send, s.log, user)
}

// userTZ is user's Slack profile time zone, "" when unknown.
func (s *Streams) userTZ(ctx context.Context, user string) string {
	u, err := s.send.UserInfo(ctx, user)
	if err != nil {
		s.log.Warn("bot: users.info failed; the stream's time zone defaults to UTC", "user", user, "err", err)
		return ""
	}
	return u.TZ
}

// lookupProblem explains a failed stream lookup.
func (s *Streams) lookupProblem(err error, name string) []slack.Block {
	if errors.Is(err, scheduler.ErrStreamNotFound) {
		return blockkit.RenderError("There is no research stream called *"+blockkit.EscapeTruncate(name, 100)+"*.", "`/research stream list` shows every stream.")
	}
	s.log.Error("bot: loading a stream failed", "err", err)
	return blockkit.RenderError("I couldn't load the stream right now.", "Please try again in a minute.")
}

// changeProblem explains why a stream command changed nothing.
func (s *Streams) changeProblem(ctx context.Context, err error, name, verb string) []slack.Block {
	switch {
	case errors.Is(err, scheduler.ErrNotAllowed):
		if st, lerr := s.svc.Show(ctx, name); lerr == nil {
			return blockkit.RenderStreamNotAllowed(st, verb)
		}
		return blockkit.RenderError("Only the stream's owner or a workspace admin can "+blockkit.Escape(verb)+" it.", "Nothing was changed.")
	case errors.Is(err, scheduler.ErrStreamNotFound):
		return s.lookupProblem(err, name)
	case errors.Is(err, scheduler.ErrDigestRunning):
		return blockkit.RenderError("A digest of *"+blockkit.EscapeTruncate(name, 100)+"* is still running.", "It will be posted when it's done; try again after that.")
	case errors.Is(err, scheduler.ErrBadPolicy):
		return blockkit.RenderError("The policy must be `auto` or `hold_draft`.", "")
	}
	s.log.Error("bot: stream command failed", "verb", verb, "err", err)
	return blockkit.RenderError("I couldn't "+blockkit.Escape(verb)+" the stream because of an internal error.", "Please try again in a minute.")
}

// startConversation opens a creation thread: the root message, then the
// first turn in its thread, and the conversation stored under the thread.
func (s *Streams) startConversation(ctx context.Context, cmd StreamCommand) error {
	tz := s.userTZ(ctx, cmd.UserID)
	conv, turn := scheduler.BeginConversation(cmd.UserID, cmd.ChannelID, tz, s.clock.Now())
	if cmd.InThread != "" {
		return s.converseIn(ctx, cmd.InChannel, cmd.InThread, conv, turn)
	}
	root, err := s.send.Post(ctx, cmd.ChannelID, "", blockkit.RenderStreamRoot(cmd.UserID), "New research stream")
	if err != nil {
		if notInChannel[slackErrorCode(err)] {
			return tell(inviteHelp(cmd.ChannelID), "Invite me first: /invite @researchbot")
		}
		s.log.Error("bot: posting a stream conversation failed", "user", cmd.UserID, "err", err)
		return tell(blockkit.RenderError("I couldn't start the conversation here: "+blockkit.Escape(slackErrorCode(err))+".", "Please try again in a minute."), "Posting failed")
	}
	if _, err := s.convs.Create(ctx, cmd.ChannelID, root, conv); err != nil {
		s.log.Error("bot: storing a stream conversation failed", "err", err)
		s.post(ctx, cmd.ChannelID, root, blockkit.RenderError("I couldn't save this conversation: my storage is not answering.", "Please run `/research stream new` again in a few minutes."), "Storage unavailable")
		return nil
	}
	s.postTurn(ctx, cmd.ChannelID, root, conv, 0, turn)
	s.log.Info("bot: stream conversation started", "user", cmd.UserID, "channel", cmd.ChannelID, "thread", root)
	return nil
}

// converseIn holds a creation conversation in an existing thread (an
// assistant panel thread): the first turn is posted there, and the
// conversation is stored under it.
func (s *Streams) converseIn(ctx context.Context, channel, thread string, conv scheduler.Conversation, turn scheduler.Turn) error {
	if _, err := s.convs.Create(ctx, channel, thread, conv); err != nil {
		s.log.Error("bot: storing a stream conversation failed", "err", err)
		return tell(blockkit.RenderError("I couldn't start the conversation: my storage is not answering.", "Please try again in a few minutes."), "Storage unavailable")
	}
	s.postTurn(ctx, channel, thread, conv, 0, turn)
	s.log.Info("bot: stream conversation started", "user", conv.Spec.Owner, "channel", conv.Spec.Channel, "thread", thread)
	return nil
}

// slackUnescaper undoes the escaping Slack applies to message text.
var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// clicked is the message whose button moved the conversation on.
type clicked struct {
	ts     string
	blocks []slack.Block
	text   string
	what   string // what the user chose, for the collapsed message
}

// Register routes the clicks on stream messages (action ids starting with
// StreamActionPrefix) to s.
func (s *Streams) Register(r *Routes) {
	r.ActionPrefix(blockkit.StreamActionPrefix, s.onAction)
	r.View(blockkit.CallbackStreamField, s.onFieldForm)
}

// onAction handles a click on a stream message; a click that cannot be
// taken is answered (App.answer) in the clicked message's thread.
func (s *Streams) onAction(ctx context.Context, req *Request) error {
	cb, act := *req.Callback, *req.Action
	user, channel, thread := req.UserID, req.Channel, req.Thread
	switch act.ActionID {
	case blockkit.ActionStreamOptions:
		return nil // ticking a box: read when Continue is clicked
	case blockkit.ActionStreamDeleteConfirm:
		id, name := blockkit.ParseStreamValue(act.Value)
		return s.confirmDelete(ctx, req, id, name)
	case blockkit.ActionStreamDeleteAbort:
		req.ReplaceOriginal = true
		req.Reply(ctx, []slack.Block{blockkit.Section("OK — the stream stays.")}, "Not deleted")
		return nil
	case blockkit.ActionStreamDryRun, blockkit.ActionStreamDryRunSkip:
		return s.dryRun(ctx, cb, channel, thread, act)
	case blockkit.ActionStreamEdit:
		s.editClicked(ctx, cb, channel, act)
		return nil
	}
	if strings.HasPrefix(act.ActionID, blockkit.ActionStreamFieldEdit) {
		return s.openFieldEdit(ctx, req)
	}
	turnNo, value := blockkit.ParseTurnValue(act.Value)
	var a scheduler.Action
	click := &clicked{ts: cb.Container.MessageTs, blocks: cb.Message.Blocks.BlockSet, text: cb.Message.Text}
	if click.ts == "" {
		click.ts = cb.Message.Timestamp
	}
	switch {
	case strings.HasPrefix(act.ActionID, blockkit.ActionStreamPick):
		a = scheduler.Action{Kind: scheduler.ActionOptionSelected, Value: value}
		click.what = "chose *" + blockkit.EscapeTruncate(value, 200) + "*"
	case act.ActionID == blockkit.ActionStreamConfirm:
		a = scheduler.Action{Kind: scheduler.ActionOptionSelected, Value: scheduler.ReviewConfirm}
		click.what = "confirmed"
	case act.ActionID == blockkit.ActionStreamChange:
		a = scheduler.Action{Kind: scheduler.ActionOptionSelected, Value: scheduler.ReviewChange}
		click.what = "asked for a change"
	case act.ActionID == blockkit.ActionStreamContinue:
		var values []string
		if st := cb.BlockActionState; st != nil {
			for _, o := range st.Values[blockkit.StreamOptionsBlock][blockkit.ActionStreamOptions].SelectedOptions {
				values = append(values, o.Value)
			}
		}
		a = scheduler.Action{Kind: scheduler.ActionOptionsSelected, Values: values}
		click.what = "chose *" + blockkit.EscapeTruncate(strings.Join(values, ", "), 400) + "*"
	case act.ActionID == blockkit.ActionStreamSkip:
		a = scheduler.Action{Kind: scheduler.ActionSkipStep}
		click.what = "skipped this question"
	default:
		s.log.Warn("bot: unknown stream action", "action", act.ActionID)
		return nil
	}
	a.Turn = turnNo
	c, v, ok, err := s.convs.Get(ctx, channel, thread)
	switch {
	case err != nil:
		s.log.Error("bot: loading a stream conversation failed", "channel", channel, "err", err)
		return tell(blockkit.RenderError("I couldn't load this conversation right now.", "Please click again in a minute."), "Try again")
	case !ok:
		return tell(blockkit.RenderError("This stream conversation has ended or expired.", "Start a new one with `/research stream new`."), "Conversation ended")
	case user != c.Spec.Owner:
		return tell(blockkit.RenderError("Only "+blockkit.Who(c.Spec.Owner)+", who is setting up this stream, can answer here.", "Nothing was changed. Start your own with `/research stream new`."), "Not your conversation")
	}
	return s.advance(ctx, channel, thread, user, c, v, a, click)
}

// advance applies one action to the conversation of a thread: it asks the
// model when needed, stores the result (compare-and-set) and posts the next
// turn. A refused action is returned as a *UserError, for the user only.
func (s *Streams) advance(ctx context.Context, channel, thread, user string, c scheduler.Conversation, version int64, a scheduler.Action, click *clicked) error {
	log := s.log.With("channel", channel, "thread", thread, "user", user, "action", a.Kind)
	if click == nil && c.Shown != "" {
		// Answered by typing: the turn's buttons go, as after a click.
		click = &clicked{ts: c.Shown, blocks: blockkit.RenderStreamTurn(c.Last, c.Spec.Owner), text: blockkit.StreamTurnText(c.Last), what: "answered by typing"}
	}
	next, turn, err := scheduler.Advance(ctx, s.model, c, a)
	var ae *scheduler.ActionError
	switch {
	case errors.As(err, &ae), errors.Is(err, scheduler.ErrModelUnavailable):
		log.Info("bot: stream conversation did not move", "reason", err)
		return tell(blockkit.RenderError(blockkit.EscapeTruncate(turn.Message, blockkit.SectionBudget-40), ""), blockkit.StreamTurnText(turn))
	case err != nil:
		log.Warn("bot: the model's proposal was refused", "err", err)
	}
	if next.Step == scheduler.StepComplete && c.Step != scheduler.StepComplete {
		return s.complete(ctx, channel, thread, user, c, version, next, click)
	}
	nv, ok, err := s.convs.Update(ctx, channel, thread, version, next)
	if err == nil && !ok {
		// The one write that may come between reading the conversation and
		// storing this answer without changing what it answers: postTurn
		// remembering where it showed the turn (an answer typed at once).
		// Store the answer on top of it; anything else is a concurrent answer.
		if cur, v, found, gerr := s.convs.Get(ctx, channel, thread); gerr == nil && found && sameButShown(c, cur) {
			if click == nil && cur.Shown != "" {
				click = &clicked{ts: cur.Shown, blocks: blockkit.RenderStreamTurn(cur.Last, cur.Spec.Owner), text: blockkit.StreamTurnText(cur.Last), what: "answered by typing"}
			}
			next.Shown = cur.Shown
			nv, ok, err = s.convs.Update(ctx, channel, thread, v, next)
		}
	}
	if err != nil || !ok {
		if err != nil {
			log.Error("bot: saving a stream conversation failed", "err", err)
		}
		return tell(blockkit.RenderError("I was still handling your previous answer, so this one was not applied.", "Please look at my latest message and answer again."), "Not applied")
	}
	if click != nil {
		s.collapse(ctx, channel, click, user)
	}
	s.postTurn(ctx, channel, thread, next, nv, turn)
	return nil
}

// sameButShown reports whether b is a with at most Shown changed.
func sameButShown(a, b scheduler.Conversation) bool {
	a.Shown, b.Shown = "", ""
	ja, err := json.Marshal(a)
	if err != nil {
		return false
	}
	jb, err := json.Marshal(b)
	return err == nil && bytes.Equal(ja, jb)
}

// complete creates the stream after the review was confirmed. The
// conversation is marked complete first, so a double click creates one
// stream; when the creation fails it goes back to the review.
func (s *Streams) complete(ctx context.Context, channel, thread, user string, before scheduler.Conversation, version int64, done scheduler.Conversation, click *clicked) error {
	log := s.log.With("channel", channel, "thread", thread, "user", user)
	nv, ok, err := s.convs.Update(ctx, channel, thread, version, done)
	if err != nil || !ok {
		return tell(blockkit.RenderError("This stream is already being created.", "Nothing else changed."), "Already confirmed")
	}
	st, err := s.save(ctx, done, user)
	if err != nil {
		if _, ok, rerr := s.convs.Update(ctx, channel, thread, nv, before); rerr != nil || !ok {
			log.Warn("bot: could not reopen the review after a failed creation", "err", rerr)
		}
		var what string
		switch {
		case errors.Is(err, scheduler.ErrNameTaken):
			what = "A stream called *" + blockkit.EscapeTruncate(done.Spec.Name, 100) + "* already exists, so I couldn't create this one. Choose *Change* and give it another name."
		case errors.Is(err, scheduler.ErrNameFixed):
			what = "A stream's name cannot be changed: it stays *" + blockkit.EscapeTruncate(before.Spec.Name, 100) + "*. Choose *Change* and set the name back, or create a new stream."
		case errors.Is(err, scheduler.ErrNotAllowed):
			what = "Only the stream's owner or a workspace admin can change it, so nothing was saved."
		case errors.Is(err, scheduler.ErrStreamNotFound):
			what = "This stream was deleted meanwhile, so there is nothing to save."
		case errors.Is(err, scheduler.ErrIncompleteSpec):
			what = "The configuration isn't complete yet: " + blockkit.EscapeTruncate(err.Error(), 1500) + ". Choose *Change* to fix it."
		default:
			log.Error("bot: creating a stream failed", "err", err)
			what = "I couldn't create the stream because of an internal error. Please click *Confirm* again in a minute."
		}
		s.post(ctx, channel, thread, blockkit.RenderError(what, ""), "The stream was not created")
		return nil
	}
	log.Info("bot: stream created", "stream", st.ID)
	if click != nil {
		s.collapse(ctx, channel, click, user)
	}
	if done.Editing != "" {
		log.Info("bot: stream edited", "stream", st.ID)
		s.post(ctx, channel, thread, blockkit.RenderStreamChanged(st, ":white_check_mark: Saved the changes to"), "Research stream updated: "+blockkit.EscapeTruncate(st.Spec.Name, 100))
		return nil
	}
	s.post(ctx, channel, thread, blockkit.RenderStreamCreated(st), "Research stream created: "+blockkit.EscapeTruncate(st.Spec.Name, 100))
	return nil
}

// dryRun answers the buttons offered after a stream is created.
func (s *Streams) dryRun(ctx context.Context, cb slack.InteractionCallback, channel, thread string, act slack.BlockAction) error {
	user := cb.User.ID
	id, name := blockkit.ParseStreamValue(act.Value)
	click := &clicked{ts: cb.Container.MessageTs, blocks: cb.Message.Blocks.BlockSet, text: cb.Message.Text}
	if id != "" {
		// The button is for one stream: not for another that took its name since.
		if st, err := s.svc.Show(ctx, name); err == nil && st.ID != id || errors.Is(err, scheduler.ErrStreamNotFound) {
			return tell(staleStreamButton(name), "That stream no longer exists")
		}
	}
	if act.ActionID == blockkit.ActionStreamDryRunSkip {
		st, err := s.svc.Show(ctx, name)
		if err == nil && !st.CanChange(user, false) {
			return tell(blockkit.RenderStreamNotAllowed(st, "answer for"), "Not allowed")
		}
		click.what = "skipped the dry run"
		s.collapse(ctx, channel, click, user)
		return nil
	}
	run, err := func() (*pipeline.Run, error) {
		r, err := s.svc.RunNow(ctx, name, user, false, scheduler.RunOptions{DryRun: true, Channel: channel, ThreadTS: thread})
		if errors.Is(err, scheduler.ErrNotAllowed) && s.isAdmin(ctx, user) {
			return s.svc.RunNow(ctx, name, user, true, scheduler.RunOptions{DryRun: true, Channel: channel, ThreadTS: thread})
		}
		return r, err
	}()
	if err != nil {
		return tell(s.changeProblem(ctx, err, name, "run"), "No dry run")
	}
	click.what = "started a dry run (run " + blockkit.RunRef(run.ID) + "); the digest will appear in this thread"
	s.collapse(ctx, channel, click, user)
	return nil
}

// confirmDelete deletes a stream after its owner confirmed. The button names
// the stream by id, so an old confirmation never deletes a newer stream that
// took the same name; a confirmation without an id (from an older version)
// is refused. Its answers replace the (ephemeral) confirmation.
func (s *Streams) confirmDelete(ctx context.Context, req *Request, id, name string) error {
	req.ReplaceOriginal = true
	user := req.UserID
	if id == "" {
		return tell(blockkit.RenderError("This confirmation is out of date, so nothing was deleted.", "Run `/research stream delete "+blockkit.EscapeTruncate(name, 100)+"` again."), "Not deleted")
	}
	st, err := s.asOwnerOrAdmin(ctx, user, func(admin bool) (*scheduler.Stream, error) { return s.svc.DeleteByID(ctx, id, user, admin) })
	if errors.Is(err, scheduler.ErrStreamNotFound) {
		return tell(staleStreamButton(name), "Not deleted")
	}
	if err != nil {
		return tell(s.changeProblem(ctx, err, name, "delete"), "Not deleted")
	}
	s.log.Info("bot: stream deleted", "stream", st.ID, "user", user)
	req.Reply(ctx, blockkit.RenderStreamChanged(st, ":wastebasket: Deleted the research stream"), "Deleted")
	return nil
}

// staleStreamButton answers a click on a button for a stream that no longer
// exists (deleted, perhaps replaced by a new stream of the same name).
func staleStreamButton(name string) []slack.Block {
	return blockkit.RenderError("The stream *"+blockkit.EscapeTruncate(name, 100)+"* this button was for no longer exists, so nothing was changed.",
		"`/research stream list` shows the streams there are now.")
}

// collapse removes the controls from a clicked turn message and records the choice.
func (s *Streams) collapse(ctx context.Context, channel string, click *clicked, user string) {
	if click.ts == "" {
		return
	}
	blocks := blockkit.RenderStreamAnswered(click.blocks, click.text, user, click.what)
	if err := s.send.Update(ctx, channel, click.ts, blocks, click.text); err != nil {
		s.log.Warn("bot: collapsing a stream message failed", "channel", channel, "err", err)
	}
}

// post posts a message in a thread.
func (s *Streams) post(ctx context.Context, channel, thread string, blocks []slack.Block, text string) {
	if _, err := s.send.Post(ctx, channel, thread, blocks, text); err != nil {
		s.log.Error("bot: posting in a stream thread failed", "channel", channel, "err", err)
	}
}

// respond answers a command ephemerally through its response_url.
func (s *Streams) respond(ctx context.Context, cmd StreamCommand, blocks []slack.Block, text string) {
	s.send.Respond(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, blocks, text)
}
