package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/pipeline"
)

// OriginKind is the pipeline.Origin.Kind of runs started in Slack.
const OriginKind = "slack"

// MessageKeyTTL is how long the Slack adapter remembers where a run's
// messages are (SlackMemory): the App, the Presenter and the features that
// remember a run's messages (where a report was shared) keep them as long,
// so they are forgotten together.
const MessageKeyTTL = 60 * 24 * time.Hour

// PresenterConfig configures a Presenter.
type PresenterConfig struct {
	// Sender is the Web API client shared with the App; nil makes one from
	// BotToken, APIURL, Metrics and HTTPClient.
	Sender   *Sender
	BotToken string
	// APIURL is the Web API base URL (SLACK_API_URL); "" means Slack's.
	APIURL string
	// Memory remembers which message shows which checkpoint and progress, so
	// any replica can update them.
	Memory SlackMemory
	// Metrics counts Web API calls; nil means none.
	Metrics *Metrics
	// MinInterval paces progress edits per run; zero means 3s.
	MinInterval time.Duration
	// HTTPClient makes the Web API calls; nil means a default client.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Clock paces progress (its flushes are timers tagged "bot",
	// "progress"), dates what is posted and waits out Slack's Retry-After;
	// nil means the real clock.
	Clock quartz.Clock
	// Admins (SLACK_ADMINS) are sent a direct message when a checkpoint's
	// circuit breaker trips; Alerts makes it one message per trip across
	// replicas. Without either, no one is alerted. They also get the
	// escalation of a checkpoint whose reminders ran out (RemindersStopped).
	Admins []string
	Alerts BreakerAlerts
	// StreamInChannels streams a run's plan (presenter_stream.go) in its
	// channel thread too, to the requester; without it only assistant
	// threads get the streamed plan and channel threads the progress
	// message.
	StreamInChannels bool
}

// Presenter shows runs that started in Slack (pipeline.Presenter for
// Origin.Kind "slack"): checkpoint messages in the run's thread, collapsed
// after the decision; one progress message edited in place, coalesced and
// paced; the final summary with the full Markdown report attached.
type Presenter struct {
	send *Sender
	mem  SlackMemory
	// once posts the messages that must be found again (postonce.go).
	once     *postOnce
	log      *slog.Logger
	clock    quartz.Clock
	interval time.Duration
	admins   []string
	alerts   BreakerAlerts
	// panel shows a run's stage in its assistant thread (assistant.go).
	panel *AssistantPanel
	// streamChannels and streamMu: the streamed plan (presenter_stream.go).
	streamChannels bool
	streamMu       streamLocks
	streamCount    progressStreamMetrics

	ctx    context.Context // for deferred progress flushes; ended by Close
	cancel context.CancelFunc

	mu       sync.Mutex
	progress map[string]*progressState
	// lastSweep is when idle progress states were last dropped; maxRuns
	// bounds how many are kept (progressMaxRuns unless a test says less).
	lastSweep time.Time
	maxRuns   int
	wg        sync.WaitGroup
}

var _ pipeline.Presenter = (*Presenter)(nil)

// now reads the Presenter's clock.
func (p *Presenter) now() time.Time { return p.clock.Now() }

// after calls f after d on the Presenter's clock unless stop is called
// first (stop reports whether it prevented the call, as time.Timer.Stop).
func (p *Presenter) after(d time.Duration, f func()) (stop func() bool) {
	t := p.clock.AfterFunc(d, f, "bot", "progress")
	return func() bool { return t.Stop() }
}

// NewPresenter makes a Presenter. Close it to stop pending progress flushes.
func NewPresenter(cfg PresenterConfig) (*Presenter, error) {
	if cfg.BotToken == "" && cfg.Sender == nil {
		return nil, errors.New("bot: presenter needs the bot token (SLACK_BOT_TOKEN)")
	}
	if cfg.Memory == nil {
		return nil, errors.New("bot: presenter needs a Memory")
	}
	p := &Presenter{
		send:     senderOr(cfg.Sender, SenderConfig{BotToken: cfg.BotToken, APIURL: cfg.APIURL, HTTPClient: cfg.HTTPClient, Metrics: cfg.Metrics, Logger: cfg.Logger, Clock: cfg.Clock}),
		mem:      cfg.Memory,
		log:      cfg.Logger,
		interval: cfg.MinInterval,
		admins:   cfg.Admins,
		alerts:   cfg.Alerts,
		progress: map[string]*progressState{},

		streamChannels: cfg.StreamInChannels,
		streamCount:    newProgressStreamMetrics(cfg.Metrics),
		maxRuns:        progressMaxRuns,
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.clock = cfg.Clock
	if p.clock == nil {
		p.clock = quartz.NewReal()
	}
	if p.interval <= 0 {
		p.interval = 3 * time.Second
	}
	p.panel = NewAssistantPanel(p.send, p.mem, p.log)
	p.once = &postOnce{send: p.send, mem: p.mem, clock: p.clock, log: p.log}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Close stops pending progress flushes and waits for one in flight.
func (p *Presenter) Close() {
	p.cancel()
	p.mu.Lock()
	for _, st := range p.progress {
		p.stopFlushLocked(st)
	}
	p.mu.Unlock()
	p.wg.Wait()
}
