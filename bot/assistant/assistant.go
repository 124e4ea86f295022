// Package assistant is the assistant panel, a feature of the bot: Slack's
// AI-app split view, where a person opens researchbot beside what they are
// reading. Slack starts an assistant thread in the person's direct
// messages with the app (assistant_thread_started); the feature greets them
// and suggests prompts, and remembers the thread with the channel the
// person is viewing (updated by assistant_thread_context_changed). A
// message in that thread is a research question: the run, its
// checkpoints, progress and report live in the thread (the conversation's
// features take over once it has a run). The thread is titled after the
// question; while the run works the panel shows a status naming its stage,
// cleared when it waits for a decision or posts its report (that status is
// the Presenter's, in package bot, through bot.AssistantPanel).
//
// A workspace without Slack's AI-app feature answers the assistant.threads
// calls with an error: bot.AssistantPanel then remembers, per workspace,
// not to make them for a while, and the person sees today's messages and
// no error.
//
// It plugs into the transport (package bot) as bot.Config.Assistant
// (bot.Assistant): the App registers its routes and asks it first about a
// message in a direct-message thread. Starting a research and what waits
// on whom are the App's rules, asked through the Request
// (bot.Request.StartResearch, bot.Request.PendingDecisions); a stream
// started in the panel goes to the streams' ports the assembly hands it.
// It renders with bot/blockkit; bot does not import it: the assembly
// (internal/app/roles) builds a Feature.
package assistant

import (
	"context"
	"errors"

	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Config configures a Feature. Memory and the Kit's Sender are required.
type Config struct {
	// Memory keeps the panel's threads, the workspaces without the panel
	// and the runs of threads (redisstore.SlackMemory, the App's).
	Memory bot.SlackMemory
	// Streams starts a stream's guided conversation in the panel (the
	// assembly passes *streams.Feature, as bot.Config.Streams.Handler);
	// nil explains /research stream new instead.
	Streams bot.StreamHandler
	// Mentions takes a message in a thread holding a stream's conversation
	// (the assembly passes *streams.Feature, as
	// bot.Config.Streams.Mentions); nil takes none.
	Mentions bot.MentionHandler
	// Kit is the transport's Sender (the panel's calls and messages) and
	// logger.
	bot.Kit
}

// Feature answers people in the assistant panel.
type Feature struct {
	mem      bot.SlackMemory
	streams  bot.StreamHandler
	mentions bot.MentionHandler
	send     *bot.Sender
	panel    *bot.AssistantPanel
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: the assistant panel needs",
		bot.Need{Name: "a Slack memory", Present: cfg.Memory != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{
		mem: cfg.Memory, streams: cfg.Streams, mentions: cfg.Mentions, send: kit.Sender,
		panel: bot.NewAssistantPanel(kit.Sender, cfg.Memory, kit.Logger),
	}, nil
}

// Register routes the assistant panel's events.
func (f *Feature) Register(r *bot.Routes) {
	r.Event(string(slackevents.AssistantThreadStarted), f.onStarted)
	r.Event(string(slackevents.AssistantThreadContextChanged), f.onContext)
}

// onStarted greets a person who opened the assistant panel, suggests
// prompts, and remembers the thread and what they are viewing.
func (f *Feature) onStarted(ctx context.Context, req *bot.Request) error {
	t := req.Assistant
	if err := f.panel.Remember(ctx, t.ChannelID, t.ThreadTimeStamp, bot.AssistantThread{User: t.UserID, Context: t.Context.ChannelID}); err != nil {
		return err
	}
	if _, err := f.send.Post(ctx, t.ChannelID, t.ThreadTimeStamp, blockkit.RenderAssistantGreeting(), blockkit.AssistantGreetingText); err != nil {
		req.Log.Warn("bot: greeting in the assistant panel failed", "err", err)
	}
	f.panel.Prompts(ctx, req.TeamID, t.ChannelID, t.ThreadTimeStamp)
	return nil
}

// onContext remembers the channel the person now views beside the panel.
func (f *Feature) onContext(ctx context.Context, req *bot.Request) error {
	t := req.Assistant
	prev, _ := f.panel.Thread(ctx, t.ChannelID, t.ThreadTimeStamp)
	prev.User = blockkit.FirstNonEmpty(prev.User, t.UserID)
	prev.Context = t.Context.ChannelID
	return f.panel.Remember(ctx, t.ChannelID, t.ThreadTimeStamp, prev)
}

// HandlePanelMessage takes a person's message in an assistant thread that
// has no run yet: a suggested prompt is answered, anything else is a
// research question started in the thread (bot.Request.StartResearch, as a
// slash command would). It reports false when the thread is not an
// assistant thread, or already has a run (then the message is a
// follow-up).
func (f *Feature) HandlePanelMessage(ctx context.Context, req *bot.Request, m bot.Mention) (bool, error) {
	if _, ok := f.panel.Thread(ctx, m.Channel, m.Thread); !ok {
		return false, nil
	}
	if _, found, err := f.mem.RunOfThread(ctx, m.Channel, m.Thread); err != nil || found {
		return false, err
	}
	if f.mentions != nil { // a stream conversation started from the panel
		if taken, err := f.mentions.HandleMention(ctx, m); taken || err != nil {
			return true, err
		}
	}
	switch blockkit.AssistantPromptOf(m.Text) {
	case blockkit.PromptResearch:
		_, err := f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantHowTo(), "Type your question")
		return true, err
	case blockkit.PromptStream:
		return true, f.startStream(ctx, req, m)
	case blockkit.PromptPending:
		pending, err := req.PendingDecisions(ctx)
		if err != nil {
			return true, err
		}
		_, err = f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantPending(pending), "Waiting for your decision")
		return true, err
	}
	c, err := bot.ParseCommand(m.Text)
	var ue *bot.UsageError
	switch {
	case errors.As(err, &ue):
		return true, bot.Tell(blockkit.RenderError(ue.Msg, ""), "Not understood")
	case err != nil:
		return true, err
	case c.Kind != bot.CmdResearch:
		_, err := f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantHowTo(), "Type your question")
		return true, err
	}
	c.ThreadTS, c.Files = m.Thread, m.Files
	f.panel.Title(ctx, req.TeamID, m.Channel, m.Thread, blockkit.AssistantTitle(c.Question))
	status, loading := blockkit.AssistantStatus(&pipeline.Run{Status: pipeline.StatusRunning, Step: pipeline.StepPlan})
	f.panel.Status(ctx, req.TeamID, m.Channel, m.Thread, status, loading)
	req.StartResearch(ctx, m.Channel, c) // req is m's: its person and thread

	if _, found, err := f.mem.RunOfThread(ctx, m.Channel, m.Thread); err == nil && !found {
		f.panel.Status(ctx, req.TeamID, m.Channel, m.Thread, "", nil) // not started: StartResearch said why
	}
	return true, nil
}

// startStream answers the "Start a research stream" prompt: with streams
// enabled and a channel viewed beside the panel, the stream's guided
// conversation starts in the assistant thread, for digests in that
// channel; otherwise it explains /research stream new.
func (f *Feature) startStream(ctx context.Context, req *bot.Request, m bot.Mention) error {
	t, _ := f.panel.Thread(ctx, m.Channel, m.Thread)
	if f.streams == nil || t.Context == "" || t.Context == m.Channel {
		_, err := f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderAssistantStreamHowTo(), "Research streams")
		return err
	}
	return f.streams.HandleStream(ctx, bot.StreamCommand{TeamID: req.TeamID, ChannelID: t.Context, UserID: m.User, Args: "new", InChannel: m.Channel, InThread: m.Thread})
}
