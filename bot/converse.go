package bot

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// The thread as a conversation: an @mention of the bot (or a reply in its
// direct messages) in a thread is routed here. Outside a thread it starts a
// research (mention_research.go); in a stream creation thread it is the
// answer to the conversation's question (Config.Streams.Mentions); in a
// run's thread it goes, in this order, to the files shared with it
// (Config.Files, bot/sharedfiles), to the run's clarifying question
// (Config.Clarify, bot/clarify), to steering while the run has not
// finished (Config.Steering, bot/steering), and to follow-up questions once
// it has (Config.FollowUps, bot/followups): each feature takes the message
// or passes it on.

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

// RunMessageHandler takes what a person said to the bot in the thread of
// run runID (a mention, or a reply in the bot's direct messages), m, made
// in request req, and reports whether it took it; what it could not do is
// returned (a Tell), for App.answer to tell the person. The App asks
// Config.Files, then Config.Clarify, then Config.Steering, then
// Config.FollowUps (see converse).
type RunMessageHandler interface {
	HandleRunMessage(ctx context.Context, req *Request, m Mention, runID string) (taken bool, err error)
}

// registerConversation routes app_mention events, and thread replies in
// the bot's direct messages (where Slack sends no app_mention) unless
// Config.Messages takes message events.
func (a *App) registerConversation(r *Routes) {
	r.Event(string(slackevents.AppMention), a.onMention)
	if a.cfg.Messages == nil {
		r.Event(string(slackevents.Message), a.onDirectMessage)
	}
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
	if a.cfg.Assistant != nil {
		if taken, err := a.cfg.Assistant.HandlePanelMessage(ctx, req, m); taken || err != nil {
			return err
		}
	}
	return a.converse(ctx, req, m)
}

// converse answers what a person said to the bot in a thread: a stream
// conversation's reply, or, in a run's thread, in this order: files shared
// with it (Config.Files; without it, bot says they are not read), the
// answer to the run's clarifying question (Config.Clarify), a steering
// note (Config.Steering) and a follow-up question (Config.FollowUps), each
// taking it or passing it on; when none takes it, follow-up questions are
// not enabled.
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
	if a.cfg.Files == nil && a.notEnabledFiles(ctx, m) {
		return nil
	}
	for _, h := range []RunMessageHandler{a.cfg.Files, a.cfg.Clarify, a.cfg.Steering, a.cfg.FollowUps} {
		if h == nil {
			continue
		}
		if taken, err := h.HandleRunMessage(ctx, req, m, runID); taken || err != nil {
			return err
		}
	}
	return Tell(blockkit.RenderError("Follow-up questions are not enabled on this researchbot.", ""), "Not enabled")
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
