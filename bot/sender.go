package bot

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"
)

// SenderConfig configures a Sender. BotToken is required.
type SenderConfig struct {
	BotToken string
	// AppToken is the app-level token Socket Mode connects with; "" for a
	// sender that only posts.
	AppToken string
	// APIURL is the Web API base URL (SLACK_API_URL); "" means Slack's.
	APIURL string
	// Metrics counts Web API calls; nil means none.
	Metrics *Metrics
	// HTTPClient makes the Web API calls; nil means a default client.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Clock waits out Slack's Retry-After; nil means the real clock.
	Clock quartz.Clock
}

// Sender owns the Slack Web API client and is the one way the interactive
// side of the bot (App, Streams) speaks in Slack: posts, ephemeral
// messages, response_url replies and updates, each with the same quiet
// options and the same bounded retry after a 429. A failure to tell someone
// something is logged here; there is nobody else to tell.
type Sender struct {
	api   *slack.Client
	clock quartz.Clock
	log   *slog.Logger
}

// NewSender builds a Sender from cfg.
func NewSender(cfg SenderConfig) *Sender {
	s := &Sender{api: newSlackAPI(cfg.BotToken, cfg.AppToken, cfg.APIURL, cfg.HTTPClient, cfg.Metrics), log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.clock = cfg.Clock
	if s.clock == nil {
		s.clock = quartz.NewReal()
	}
	s.log = slog.New(capLogs(s.log.Handler()))
	return s
}

// senderOr returns s, or a new Sender from cfg when s is nil.
func senderOr(s *Sender, cfg SenderConfig) *Sender {
	if s != nil {
		return s
	}
	return NewSender(cfg)
}

// API is the Web API client, for the calls that are not messages (views,
// users.info, auth.test).
func (s *Sender) API() *slack.Client { return s.api }

// Post posts a message in channel, in thread when given, and returns its ts.
func (s *Sender) Post(ctx context.Context, channel, thread string, blocks []slack.Block, text string) (string, error) {
	opts := []slack.MsgOption{quiet(blocks, text)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := retry429(ctx, s.clock, func() error {
		var err error
		_, ts, err = s.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// Update replaces the message ts in channel.
func (s *Sender) Update(ctx context.Context, channel, ts string, blocks []slack.Block, text string) error {
	return retry429(ctx, s.clock, func() error {
		_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, quiet(blocks, text))
		return err
	})
}

// Ephemeral shows a message only to user, in the thread when given.
func (s *Sender) Ephemeral(ctx context.Context, channel, user, thread string, blocks []slack.Block, text string) {
	opts := []slack.MsgOption{quiet(blocks, text)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	err := retry429(ctx, s.clock, func() error {
		_, err := s.api.PostEphemeralContext(ctx, channel, user, opts...)
		return err
	})
	if err != nil {
		s.log.Error("bot: ephemeral message failed", "user", user, "channel", channel, "err", err)
	}
}

// Respond answers a slash command ephemerally through its response_url,
// which works even in channels the bot is not in; without one it posts an
// ephemeral message.
func (s *Sender) Respond(ctx context.Context, responseURL, channel, user string, blocks []slack.Block, text string) {
	if responseURL == "" {
		s.Ephemeral(ctx, channel, user, "", blocks, text)
		return
	}
	err := retry429(ctx, s.clock, func() error {
		_, _, err := s.api.PostMessageContext(ctx, channel,
			slack.MsgOptionResponseURL(responseURL, slack.ResponseTypeEphemeral), quiet(blocks, text))
		return err
	})
	if err != nil {
		s.log.Error("bot: replying to a command failed", "user", user, "channel", channel, "err", err)
	}
}

// ReplaceOriginal replaces a clicked (ephemeral) message through the
// click's response_url; without one it posts an ephemeral message.
func (s *Sender) ReplaceOriginal(ctx context.Context, cb slack.InteractionCallback, blocks []slack.Block, text string) {
	if cb.ResponseURL == "" {
		s.Ephemeral(ctx, cb.Channel.ID, cb.User.ID, threadOf(cb), blocks, text)
		return
	}
	err := retry429(ctx, s.clock, func() error {
		_, _, err := s.api.PostMessageContext(ctx, cb.Channel.ID, slack.MsgOptionReplaceOriginal(cb.ResponseURL), quiet(blocks, text))
		return err
	})
	if err != nil {
		s.log.Error("bot: replying to a click failed", "user", cb.User.ID, "err", err)
	}
}

// newSlackAPI makes a Web API client that counts its calls.
func newSlackAPI(botToken, appToken, apiURL string, hc *http.Client, m *Metrics) *slack.Client {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	if m != nil {
		c := *hc
		c.Transport = m.Transport(hc.Transport)
		hc = &c
	}
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if apiURL != "" {
		if !strings.HasSuffix(apiURL, "/") {
			apiURL += "/"
		}
		opts = append(opts, slack.OptionAPIURL(apiURL))
	}
	if appToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(appToken))
	}
	return slack.New(botToken, opts...)
}
