package bot

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"
)

// maxRateLimitRetries bounds how often one call is retried after a 429.
const maxRateLimitRetries = 3

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

// Sender owns the Slack Web API client and is the one way the bot speaks
// to Slack's Web API: posts, ephemeral messages, response_url replies and
// updates, each with the same quiet options, and every other call (views,
// files, users, conversations, streams, sender_calls.go), each named by
// what it does.
//
// A call Slack answers with HTTP 429 is retried by slack-go's own retry
// (slack.OptionRetryConfig with its 429 handler, which reads Retry-After),
// at most maxRateLimitRetries times; the wait runs on the Sender's clock
// (see clockedRetry), so tests advance a quartz mock instead of sleeping.
// Paced gives the calls whose callers pace their own retries. A failure to
// tell someone something is logged here; there is nobody else to tell.
type Sender struct {
	api *slack.Client
	// once is the same client without the 429 retry (Paced).
	once *slack.Client
	log  *slog.Logger
}

// NewSender builds a Sender from cfg.
func NewSender(cfg SenderConfig) *Sender {
	clk := cfg.Clock
	if clk == nil {
		clk = quartz.NewReal()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hc := slackHTTPClient(cfg.HTTPClient, cfg.Metrics)
	return &Sender{
		api:  newSlackAPI(cfg.BotToken, cfg.AppToken, cfg.APIURL, hc, slack.OptionRetryConfig(retryConfig(clk))),
		once: newSlackAPI(cfg.BotToken, cfg.AppToken, cfg.APIURL, hc),
		log:  slog.New(CapLogs(log.Handler())),
	}
}

// senderOr returns s, or a new Sender from cfg when s is nil.
func senderOr(s *Sender, cfg SenderConfig) *Sender {
	if s != nil {
		return s
	}
	return NewSender(cfg)
}

// Paced is s for callers that pace their own retries (progress edits and
// streamed plans wait for their next flush): a 429 is returned at once, as
// a *slack.RateLimitedError, instead of being waited out.
func (s *Sender) Paced() *Sender {
	return &Sender{api: s.once, once: s.once, log: s.log}
}

// API is the Sender's client itself, for Socket Mode alone (socketmode.New
// needs one; its apps.connections.open is retried like the Sender's calls).
// Every other call goes through a method.
func (s *Sender) API() *slack.Client { return s.api }

// Post posts a message in channel, in thread when given, and returns its ts.
func (s *Sender) Post(ctx context.Context, channel, thread string, blocks []slack.Block, text string) (string, error) {
	opts := []slack.MsgOption{quiet(blocks, text)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	_, ts, err := s.api.PostMessageContext(ctx, channel, opts...)
	return ts, err
}

// PostMessage posts a message made of opts as they are (add quiet for
// blocks and text) and returns the channel and ts Slack answered with: a
// message posted to a user id lands in a DM whose channel id differs.
func (s *Sender) PostMessage(ctx context.Context, channel string, opts ...slack.MsgOption) (string, string, error) {
	return s.api.PostMessageContext(ctx, channel, opts...)
}

// Update replaces the message ts in channel.
func (s *Sender) Update(ctx context.Context, channel, ts string, blocks []slack.Block, text string) error {
	_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, quiet(blocks, text))
	return err
}

// Ephemeral shows a message only to user, in the thread when given.
func (s *Sender) Ephemeral(ctx context.Context, channel, user, thread string, blocks []slack.Block, text string) {
	opts := []slack.MsgOption{quiet(blocks, text)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	if _, err := s.api.PostEphemeralContext(ctx, channel, user, opts...); err != nil {
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
	if err := s.RespondEphemeral(ctx, responseURL, channel, blocks, text); err != nil {
		s.log.Error("bot: replying to a command failed", "user", user, "channel", channel, "err", err)
	}
}

// RespondEphemeral posts an ephemeral reply through a response_url (of a
// command or a click in channel).
func (s *Sender) RespondEphemeral(ctx context.Context, responseURL, channel string, blocks []slack.Block, text string) error {
	_, _, err := s.api.PostMessageContext(ctx, channel,
		slack.MsgOptionResponseURL(responseURL, slack.ResponseTypeEphemeral), quiet(blocks, text))
	return err
}

// ReplaceOriginal replaces a clicked (ephemeral) message through the
// click's response_url; without one it posts an ephemeral message.
func (s *Sender) ReplaceOriginal(ctx context.Context, cb slack.InteractionCallback, blocks []slack.Block, text string) {
	if cb.ResponseURL == "" {
		s.Ephemeral(ctx, cb.Channel.ID, cb.User.ID, threadOf(cb), blocks, text)
		return
	}
	if _, _, err := s.api.PostMessageContext(ctx, cb.Channel.ID, slack.MsgOptionReplaceOriginal(cb.ResponseURL), quiet(blocks, text)); err != nil {
		s.log.Error("bot: replying to a click failed", "user", cb.User.ID, "err", err)
	}
}

// retryConfig is the Sender's slack.RetryConfig: 429s only, at most
// maxRateLimitRetries times, after exactly Retry-After (no jitter; 1s when
// Slack names none), waited on clk.
func retryConfig(clk quartz.Clock) slack.RetryConfig {
	cfg := slack.RetryConfig{MaxRetries: maxRateLimitRetries, RetryAfterDuration: time.Second}
	cfg.Handlers = []slack.RetryHandler{clockedRetry{next: slack.NewRateLimitErrorRetryHandler(cfg), clock: clk}}
	return cfg
}

// clockedRetry is slack-go's 429 handler with its wait on a quartz clock.
// slack-go's retry loop sleeps on the real clock for the wait a handler
// returns; this handler asks slack-go's own (which parses Retry-After and
// counts the attempts) whether and how long to wait, waits that long on its
// clock (a timer tagged "bot", "retryafter"), then returns a wait of zero,
// so the loop sends the call again at once. When the call's context ends
// first it declines, and the 429 reaches the caller as a
// *slack.RateLimitedError, as it would without retries.
type clockedRetry struct {
	next  slack.RetryHandler
	clock quartz.Clock
}

// ShouldRetry implements slack.RetryHandler.
func (h clockedRetry) ShouldRetry(state *slack.RetryState, req *http.Request, resp *http.Response, err error) (bool, time.Duration) {
	retry, wait := h.next.ShouldRetry(state, req, resp, err)
	if !retry {
		return false, 0
	}
	// Free the connection for the wait: slack-go reads a 429's headers
	// only (Retry-After), never its body.
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	resp.Body = http.NoBody
	t := h.clock.NewTimer(wait, "bot", "retryafter")
	defer t.Stop()
	select {
	case <-t.C:
		return true, 0
	case <-req.Context().Done():
		return false, 0
	}
}

// slackHTTPClient is the HTTP client of the Web API calls: hc (nil: one
// with a 30s timeout) counting its calls in m when given.
func slackHTTPClient(hc *http.Client, m *Metrics) *http.Client {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	if m != nil {
		c := *hc
		c.Transport = m.Transport(hc.Transport)
		hc = &c
	}
	return hc
}

// newSlackAPI makes a Web API client over hc, with extra options after the
// HTTP client (slack.OptionRetryConfig wraps it).
func newSlackAPI(botToken, appToken, apiURL string, hc *http.Client, extra ...slack.Option) *slack.Client {
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
	return slack.New(botToken, append(opts, extra...)...)
}
