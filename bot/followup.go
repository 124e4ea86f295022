package bot

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// The thread as a conversation: an @mention of the bot in a research thread
// is a steering note while the run runs (steering.go), and once it has
// finished a follow-up question, answered in the thread from the run's own
// sources (pipeline.Engine.Ask); in a stream creation thread it is the
// answer to the conversation's question.

// FollowUpAsker is what follow-up questions need of the engine
// (*pipeline.Engine).
type FollowUpAsker interface {
	Ask(ctx context.Context, runID, question, by string) (*pipeline.Run, pipeline.FollowUp, error)
}

// Mention is what a person said to the bot with an @mention in a thread,
// without the mention.
type Mention struct {
	Channel, Thread, User, Text string
	// Files are the files shared with the message (shared_files.go).
	Files []slack.File
}

// MentionHandler takes mentions in threads it holds a conversation in (the
// guided stream creation) and reports whether it took this one; what it
// could not do is returned, for App.answer to tell the person.
type MentionHandler interface {
	HandleMention(ctx context.Context, m Mention) (taken bool, err error)
}

// FollowUpsConfig configures the follow-up questions of an App.
type FollowUpsConfig struct {
	// Asker answers follow-up questions from a run's sources (the
	// assembly passes the Engine); nil answers that follow-up questions
	// are not enabled.
	Asker FollowUpAsker
	// Limit bounds the follow-up questions one person may ask (zero: 20
	// per hour).
	Limit Limit
}

// DefaultFollowUpLimit is how many follow-up questions one person may ask
// when FollowUpsConfig.Limit is zero.
var defaultFollowUpLimit = Limit{Rate: 20, Period: time.Hour}

// registerFollowUps routes app_mention events, thread replies in the bot's
// direct messages (where Slack sends no app_mention) unless Config.Messages
// takes message events, and the "Research this" button.
func (a *App) registerFollowUps(r *Routes) {
	r.Event(string(slackevents.AppMention), a.onMention)
	if a.cfg.Messages == nil {
		r.Event(string(slackevents.Message), a.onDirectMessage)
	}
	r.Action(blockkit.ActionResearchFollowUp, a.onResearchFollowUp)
}

// rememberThread records that thread is run runID's, for follow-ups.
func (a *App) rememberThread(ctx context.Context, channel, thread, runID string) {
	if err := a.cfg.Memory.RememberRunOfThread(ctx, channel, thread, runID, MessageKeyTTL); err != nil {
		a.log.Warn("bot: remembering a run's thread failed; follow-ups there will not be answered", "run_id", runID, "err", err)
	}
}

// leadingMentions matches the @mentions a message starts with.
var leadingMentions = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:\s*<@[A-Z0-9]+(?:\|[^>]*)?>)+\s*`) })

// mentionOf is the Mention of an app_mention event ("" text when none).
func mentionOf(ev *slackevents.AppMentionEvent) Mention {
	return Mention{Channel: ev.Channel, Thread: ev.ThreadTimeStamp, User: ev.User, Text: mentionText(ev.Text), Files: ev.Files}
}

// mentionText is a message's text without the mentions it starts with,
// unescaped, without invisible characters.
func mentionText(text string) string {
	return strings.TrimSpace(blockkit.Visible(blockkit.Unescape(leadingMentions().ReplaceAllString(text, ""))))
}

// onMention answers an @mention in a channel.
func (a *App) onMention(ctx context.Context, req *Request) error {
	return a.converse(ctx, req, mentionOf(req.Mention))
}

// onDirectMessage answers a thread reply in the bot's direct messages as
// it would a mention in a channel; message events from elsewhere are not
// the bot's business.
func (a *App) onDirectMessage(ctx context.Context, req *Request) error {
	ev := req.Message
	if ev.ChannelType != "im" {
		return nil
	}
	m := Mention{Channel: ev.Channel, Thread: ev.ThreadTimeStamp, User: ev.User, Text: mentionText(ev.Text)}
	if ev.Message != nil {
		m.Files = ev.Message.Files
	}
	if taken, err := a.onAssistantMessage(ctx, req, m); taken || err != nil {
		return err
	}
	return a.converse(ctx, req, m)
}

// converse answers what a person said to the bot in a thread: a stream
// conversation's reply, or a follow-up question about the thread's run.
func (a *App) converse(ctx context.Context, req *Request, m Mention) error {
	if m.Thread == "" {
		return a.researchFromMention(ctx, req, m)
	}
	if a.cfg.Streams.Mentions != nil {
		if taken, err := a.cfg.Streams.Mentions.HandleMention(ctx, m); taken || err != nil {
			return err
		}
	}
	runID, found, err := a.cfg.Memory.RunOfThread(ctx, m.Channel, m.Thread)
	if err != nil {
		return err
	}
	if !found {
		return Tell(blockkit.RenderError("I don't know a research run in this thread, so I have no sources to answer from.", "Mention me in the thread of a research report, or start one with `/research &lt;question&gt;`."), "No research here")
	}
	if taken, err := a.shareFiles(ctx, m, runID); taken || err != nil {
		return err
	}
	if taken, err := a.answerClarify(ctx, req, m, runID); taken || err != nil {
		return err
	}
	if taken, err := a.steer(ctx, req, m, runID); taken || err != nil {
		return err
	}
	asker := a.cfg.FollowUps.Asker
	if asker == nil {
		return Tell(blockkit.RenderError("Follow-up questions are not enabled on this researchbot.", ""), "Not enabled")
	}
	if m.Text == "" {
		return Tell(blockkit.RenderError("Ask me a question about this report after the mention.", "For example: _@researchbot what did [3] say about costs?_"), "Ask a question")
	}
	if err := a.allowFollowUp(ctx, req); err != nil {
		return err
	}
	ts, err := a.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderFollowUpPending(m.User, m.Text), "Looking in the report's sources…")
	if err != nil {
		return err
	}
	r, f, err := asker.Ask(ctx, runID, m.Text, m.User)
	if err != nil {
		blocks := a.followUpProblem(err, runID)
		if uerr := a.send.Update(ctx, m.Channel, ts, append(blockkit.RenderFollowUpPending(m.User, m.Text)[:1], blocks...), "Not answered"); uerr != nil {
			req.Log.Warn("bot: showing a follow-up failure failed", "err", uerr)
		}
		return nil
	}
	outcome := "not_answered"
	if f.Answered {
		outcome = "answered"
	}
	a.metrics.CounterVec(prometheus.CounterOpts{
		Name: "researchbot_follow_ups_total",
		Help: "Follow-up questions answered in research threads, by outcome (answered from the sources or not)."}, "outcome").WithLabelValues(outcome).Inc()
	req.Log.Info("bot: follow-up answered", "run_id", r.ID, "follow_up", f.ID, "answered", f.Answered)
	return a.send.Update(ctx, m.Channel, ts, blockkit.RenderFollowUp(r.Report, f), blockkit.FollowUpText(f))
}

// allowFollowUp takes one follow-up from the person's budget.
func (a *App) allowFollowUp(ctx context.Context, req *Request) error {
	l := a.cfg.FollowUps.Limit
	if l.Rate <= 0 || l.Period <= 0 {
		l = defaultFollowUpLimit
	}
	wait, err := a.cfg.Budget.Allow(ctx, "ask:"+req.TeamID+":"+req.UserID, l.Rate, l.Period)
	if err != nil {
		return err
	}
	if wait > 0 {
		a.metrics.limited("follow_up")
		return Tell(blockkit.RenderError(followUpLimitMessage(l, wait, a.now()), ""), "Rate limited")
	}
	return nil
}

// followUpLimitMessage explains a refused follow-up and when to ask again.
func followUpLimitMessage(l Limit, wait time.Duration, now time.Time) string {
	wait = max(wait.Round(time.Second), time.Second)
	return "You have asked as many follow-up questions as allowed (" + blockkit.Count(l.Rate) + " per " + periodName(l.Period) + "). Ask again in " + blockkit.Duration(wait) + " (" + blockkit.SlackDate(now.Add(wait)) + ")."
}

// followUpProblem explains a follow-up that could not be answered.
func (a *App) followUpProblem(err error, runID string) []slack.Block {
	var inv *pipeline.InvalidRequestError
	switch {
	case errors.Is(err, pipeline.ErrNoReport):
		return blockkit.RenderError("This run has no report yet, so there are no sources to answer from.", "Ask again once the report is posted in this thread.")
	case errors.As(err, &inv):
		return blockkit.RenderError(blockkit.EscapeTruncate(strings.Join(inv.Problems, "; "), 500)+".", "")
	case errors.Is(err, pipeline.ErrNotFound):
		return blockkit.RenderError("Run "+blockkit.RunRef(runID)+" no longer exists, so I can't answer from its sources.", "")
	}
	a.log.Error("bot: answering a follow-up failed", "run_id", runID, "err", err)
	return blockkit.RenderError("I couldn't answer this: the model or my storage did not answer.", "Please ask again in a minute.")
}

// onResearchFollowUp starts a run for a follow-up the sources did not
// answer, in a new thread of the parent's channel, linked both ways.
func (a *App) onResearchFollowUp(ctx context.Context, req *Request) error {
	fid := req.Action.Value
	parent, err := a.engine.Load(ctx, pipeline.FollowUpRun(fid))
	var f *pipeline.FollowUp
	if err == nil {
		f = parent.FollowUpByID(fid)
	}
	if f == nil {
		return Tell(blockkit.RenderError("I can't find this follow-up question any more.", "Start a new research with `/research &lt;question&gt;`."), "Not found")
	}
	if f.Child == "" {
		start := &Request{
			UserID: req.UserID, TeamID: req.TeamID, Channel: parent.Origin.Channel, Thread: req.Thread,
			Command: &slack.SlashCommand{TeamID: req.TeamID, ChannelID: parent.Origin.Channel, UserID: req.UserID},
			Parsed:  Command{Kind: CmdResearch, Question: f.Question, Mode: parent.Mode, Depth: parent.Depth, FollowUpOf: fid},
			Log:     req.Log, send: a.send, app: a,
		}
		a.serve(ctx, a.startResearch, start)
		if parent, err = a.engine.Load(ctx, parent.ID); err != nil {
			return err
		}
		f = parent.FollowUpByID(fid)
	}
	if f == nil || f.Child == "" {
		return nil // startResearch said why
	}
	// The answer now names the run instead of offering the button.
	if cb := req.Callback; cb != nil && cb.Message.Timestamp != "" {
		if err := a.send.Update(ctx, req.Channel, cb.Message.Timestamp, blockkit.RenderFollowUp(parent.Report, *f), blockkit.FollowUpText(*f)); err != nil {
			req.Log.Warn("bot: collapsing the Research this button failed", "err", err)
		}
	}
	return nil
}

// linkFollowUp shows, once a follow-up's run has started, the link both
// ways: in the parent's thread and in the new run's.
func (a *App) linkFollowUp(ctx context.Context, child *pipeline.Run, thread, by string) {
	parent, err := a.engine.Load(ctx, child.Parent)
	if err != nil {
		a.log.Warn("bot: loading the parent of a follow-up run failed", "run_id", child.ID, "err", err)
		return
	}
	var f pipeline.FollowUp
	for _, g := range parent.FollowUps {
		if g.Child == child.ID {
			f = g
		}
	}
	if parent.Origin.Kind == OriginKind && parent.Origin.ThreadTS != "" {
		if _, err := a.send.Post(ctx, parent.Origin.Channel, parent.Origin.ThreadTS, blockkit.RenderFollowUpStarted(f, child.ID, by), "Follow-up research started"); err != nil {
			a.log.Warn("bot: naming a follow-up run in its parent's thread failed", "run_id", child.ID, "err", err)
		}
	}
	if _, err := a.send.Post(ctx, child.Origin.Channel, thread, blockkit.RenderFollowUpOf(parent), "Follow-up of run "+parent.ID); err != nil {
		a.log.Warn("bot: naming the parent in a follow-up run's thread failed", "run_id", child.ID, "err", err)
	}
}
