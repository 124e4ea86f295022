// Package streams is the Slack side of research streams, a feature of the
// bot: "/research stream …", the guided creation conversation in a thread,
// the edits and the stream messages' buttons. It plugs into the transport
// (package bot) through the seam bot declares (bot.StreamHandler,
// bot.MentionHandler, the routes it registers) and renders with bot/blockkit;
// bot does not import it: the assembly (internal/app/roles) builds a Feature
// and hands it to bot.Config.Streams.
package streams

// The feature: the ports it needs, its configuration, its routes and how it
// posts.

import (
	"context"
	"log/slog"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// Service is what the stream commands need of the research-stream
// service (*scheduler.Service).
type Service interface {
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

// Config configures a Feature. Service, Conversations, Model and
// the Kit's Sender are required.
type Config struct {
	Service       Service
	Conversations ConversationStore
	// Model proposes the conversation's turns (the LLM; see internal/app).
	Model scheduler.TurnProposer
	// Kit is the transport's Sender, metrics, logger and clock (it dates
	// the streams' conversations and lists).
	bot.Kit
}

// Feature is the Slack side of research streams: "/research stream …", the
// guided creation conversation in a thread (buttons, checkboxes, Skip,
// answers typed by mentioning the bot in the thread) and the stream
// buttons. Set it as bot.StreamsUIConfig's Handler and Mentions. It keeps no
// state in memory: the conversations live in the ConversationStore.
type Feature struct {
	send  *bot.Sender
	svc   Service
	convs ConversationStore
	model scheduler.TurnProposer
	log   *slog.Logger
	clock quartz.Clock
}

var _ bot.StreamHandler = (*Feature)(nil)

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: streams need",
		bot.Need{Name: "the stream service", Present: cfg.Service != nil},
		bot.Need{Name: "a conversation store", Present: cfg.Conversations != nil},
		bot.Need{Name: "a model", Present: cfg.Model != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{svc: cfg.Service, convs: cfg.Conversations, model: cfg.Model, send: kit.Sender, log: kit.Logger, clock: kit.Clock}, nil
}

// Register routes the clicks on stream messages (action ids starting with
// blockkit.StreamActionPrefix) and the field forms to s.
func (s *Feature) Register(r *bot.Routes) {
	r.ActionPrefix(blockkit.StreamActionPrefix, s.onAction)
	r.View(blockkit.CallbackStreamField, s.onFieldForm)
}

// post posts a message in a thread.
func (s *Feature) post(ctx context.Context, channel, thread string, blocks []slack.Block, text string) {
	if _, err := s.send.Post(ctx, channel, thread, blocks, text); err != nil {
		s.log.Error("bot: posting in a stream thread failed", "channel", channel, "err", err)
	}
}

// respond answers a command ephemerally through its response_url.
func (s *Feature) respond(ctx context.Context, cmd bot.StreamCommand, blocks []slack.Block, text string) {
	s.send.Respond(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, blocks, text)
}
