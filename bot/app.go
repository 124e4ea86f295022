package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what the bot needs of the research engine (*pipeline.Engine).
type Engine interface {
	Start(ctx context.Context, req pipeline.Request) (*pipeline.Run, error)
	Decide(ctx context.Context, instanceID string, d checkpoints.Decision) (*pipeline.Run, error)
	Cancel(ctx context.Context, runID, by string) error
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
	List(ctx context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error)
	// OfferLostAgain offers the run's current checkpoint again after its
	// stored state was found to have gone back (pipeline.Engine.OfferLostAgain):
	// a click on a checkpoint of the lost future asks it (lost_checkpoint.go).
	OfferLostAgain(ctx context.Context, runID, evidence string) (*pipeline.Run, error)
	// Release and Withdraw end the hold of a run started held (heldruns.go).
	Release(ctx context.Context, runID, threadTS string) (*pipeline.Run, error)
	Withdraw(ctx context.Context, runID, reason string) error
}

// MessageHandler receives thread messages (events_api message events), for
// guided conversations such as stream creation. What it returns is answered
// like any handler's error (App.answer), to the author, in the thread.
type MessageHandler interface {
	HandleMessage(ctx context.Context, ev *slackevents.MessageEvent) error
}

// Config configures an App: the transport's fields, then one field per
// feature. AppToken, BotToken, Engine, Memory and Budget are required.
type Config struct {
	AppToken string // xapp-… (SLACK_APP_TOKEN)
	BotToken string // xoxb-… (SLACK_BOT_TOKEN)
	APIURL   string // SLACK_API_URL; "" means Slack's
	// Sender is the Web API client shared with Streams and the Presenter;
	// it must carry AppToken. nil makes one from the tokens.
	Sender *Sender
	Engine Engine
	// Memory is what the bot remembers for every replica (and is checked
	// by /readyz).
	Memory SlackMemory
	// Budget keeps the per-user and per-workspace rate limits.
	Budget RateBudget
	// Deliveries remembers the deliveries handled by every replica, so a
	// delivery Slack repeats is acted on once; nil means Memory.
	Deliveries DeliveryMemory
	// Metrics is shared with the Engine (as its Observer); nil makes new ones.
	Metrics *Metrics
	Limits  RateLimits
	// Workers and Queue bound the work done after acks (defaults 16 and 256);
	// JobTimeout bounds one job (default 60s).
	Workers    int
	Queue      int
	JobTimeout time.Duration
	// Messages receives thread messages in place of the follow-ups'
	// handler of replies in the bot's direct messages; nil leaves them to
	// it.
	Messages MessageHandler
	// Features add routes of their own (see Routes): the assembly lists
	// bot/decisions, bot/start, bot/feedback, bot/share, bot/neverdomain and
	// bot/followups here.
	Features   []Registrar
	HTTPClient *http.Client
	// Logger receives the bot's logs; values longer than a few hundred bytes
	// (which Slack payloads can carry) are logged as a prefix and a length.
	Logger *slog.Logger
	// Clock is the bot's one clock: it dates what the bot records and runs
	// its timers (the ack guard, the form-check budget, the reconnect
	// backoff, Slack's Retry-After waits); nil means the real clock. Tests pass a quartz mock and advance it instead of waiting.
	Clock quartz.Clock

	// The features, one field each, each configured by a struct declared
	// beside it; a nil port leaves its feature (or that part of it) off.

	// Checkpoints configures who decides checkpoints (checkpoint_rules.go);
	// their buttons and forms are a feature (bot/decisions, in Features).
	Checkpoints CheckpointsConfig
	// Clarify takes what is said in the thread of a run waiting at its
	// clarify checkpoint as the answers to its questions (the assembly
	// passes bot/clarify); nil passes it on to Steering. See converse for
	// the order.
	Clarify RunMessageHandler
	// Steering takes what is said in the thread of a run that has not
	// finished (the assembly passes bot/steering); nil passes it on to
	// FollowUps. See converse for the order.
	Steering RunMessageHandler
	// FollowUps answers follow-up questions in a run's thread (the
	// assembly passes bot/followups, whose "Research this" button is in
	// Features); nil answers that follow-up questions are not enabled.
	FollowUps RunMessageHandler
	// Streams routes "/research stream …" and the streams' conversations
	// (streams_ui.go).
	Streams StreamsUIConfig
	// Home is the App Home (the assembly passes *home.Feature of
	// bot/home); nil means none (home.go).
	Home Home
	// Files takes the files shared in a run's thread (the assembly
	// passes bot/sharedfiles, which adds them before the run searches);
	// nil answers that shared files are not read there. It is asked first
	// (see converse). Files in the start form and sent with a question
	// need no feature: they go with the new run.
	Files RunMessageHandler
	// Assistant is the assistant panel (the assembly passes
	// *assistant.Feature of bot/assistant): it routes the panel's events
	// and is asked first about a person's message in a direct-message
	// thread. nil means no panel: the panel's events are not answered (no
	// greeting, no suggested prompts) and a message in its thread is taken
	// as in any direct-message thread (converse).
	Assistant Assistant
	// Start configures how runs start: the start form's remembered
	// settings and the person's token for workspace search (shortcuts.go).
	Start StartConfig
}

// App is the Slack bot: a Socket Mode loop that acks, routes and hands the
// slow work to a bounded pool.
type App struct {
	cfg  Config
	send *Sender
	// once posts a request's root message once (postonce.go).
	once      *postOnce
	routes    *Routes
	sm        *socketmode.Client
	engine    Engine
	limiter   *limiter
	metrics   *Metrics
	log       *slog.Logger
	clock     quartz.Clock
	approvers map[string]map[string]bool
	pool      *pool
	connected atomic.Bool
	started   atomic.Bool
	// install is the workspace and app the bot serves, learned from Slack
	// before the first connection; requests from elsewhere are refused.
	install      atomic.Pointer[installation]
	deliveries   DeliveryMemory
	guardMetrics guardMetrics
	// spare bounds the goroutines that tell people the pool is full.
	spare   chan struct{}
	spareWG sync.WaitGroup
	// formSlots bounds the forms being opened on the fast path
	// (Routes.FormAction), apart from the pool (see openFast).
	formSlots chan struct{}
	formWG    sync.WaitGroup
	// refused receives, once, the error that stops Run when Slack refuses a
	// token after the bot had started (revoked, app uninstalled).
	refused     chan error
	refusedOnce sync.Once
}

// overflow runs fn on a spare goroutine (at most cap(spare) at once, each
// bounded by a timeout) to tell someone the pool is full; when even those are
// busy it is dropped.
func (a *App) overflow(fn func(ctx context.Context)) {
	select {
	case a.spare <- struct{}{}:
	default:
		a.log.Warn("bot: overloaded; a busy notice was dropped")
		return
	}
	a.spareWG.Go(func() {
		defer func() { <-a.spare }()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		fn(ctx)
	})
}

// now reads the bot's clock.
func (a *App) now() time.Time { return a.clock.Now() }

// New checks cfg and builds an App; Run starts it.
func New(cfg Config) (*App, error) {
	var problems []string
	if !strings.HasPrefix(cfg.AppToken, "xapp-") {
		problems = append(problems, "SLACK_APP_TOKEN must be an app-level token (xapp-…)")
	}
	if !strings.HasPrefix(cfg.BotToken, "xoxb-") {
		problems = append(problems, "SLACK_BOT_TOKEN must be a bot token (xoxb-…)")
	}
	if cfg.Engine == nil {
		problems = append(problems, "an engine is required")
	}
	if cfg.Memory == nil {
		problems = append(problems, "Memory is required")
	}
	if cfg.Budget == nil {
		problems = append(problems, "Budget is required")
	}
	if len(problems) > 0 {
		return nil, errors.New("bot: " + strings.Join(problems, "; "))
	}
	a := &App{cfg: cfg, engine: cfg.Engine, metrics: cfg.Metrics, log: cfg.Logger}
	if a.metrics == nil {
		a.metrics = NewMetrics()
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.log = slog.New(CapLogs(a.log.Handler()))
	a.deliveries = cfg.Deliveries
	if a.deliveries == nil {
		a.deliveries = cfg.Memory
	}
	a.guardMetrics = newGuardMetrics(a.metrics)
	a.clock = cfg.Clock
	if a.clock == nil {
		a.clock = quartz.NewReal()
	}
	a.refused = make(chan error, 1)
	a.approvers = map[string]map[string]bool{}
	for ch, users := range cfg.Checkpoints.Approvers {
		a.approvers[ch] = map[string]bool{}
		for _, u := range users {
			a.approvers[ch][u] = true
		}
	}
	a.send = senderOr(cfg.Sender, SenderConfig{BotToken: cfg.BotToken, AppToken: cfg.AppToken, APIURL: cfg.APIURL, HTTPClient: cfg.HTTPClient, Metrics: a.metrics, Logger: a.log, Clock: a.clock})
	a.once = &postOnce{send: a.send, mem: cfg.Memory, clock: a.clock, log: a.log}
	a.routes = NewRoutes()
	a.registerRoutes()
	a.sm = socketmode.New(a.send.API(), socketmode.OptionLog(slog.NewLogLogger(a.log.Handler(), slog.LevelDebug))) // Socket Mode needs the client itself
	a.limiter = &limiter{budget: cfg.Budget, limits: cfg.Limits.withDefaults()}
	workers, queue, timeout := cfg.Workers, cfg.Queue, cfg.JobTimeout
	if workers <= 0 {
		workers = 16
	}
	if queue <= 0 {
		queue = 256
	}
	if timeout <= 0 {
		timeout = time.Minute
	}
	a.pool = newPool(workers, queue, timeout, a.log)
	a.spare = make(chan struct{}, 4)
	a.formSlots = make(chan struct{}, formSlots)
	return a, nil
}

// Handler serves /healthz, /readyz and /metrics.
func (a *App) Handler() http.Handler {
	return HealthHandler(a.metrics, a.connected.Load, a.cfg.Memory.Ping)
}

// Run connects to Slack and serves until ctx ends; then it stops taking new
// work, finishes the work in flight and returns nil. It reconnects whenever
// the connection drops or cannot be made, except when Slack refuses a token
// (revoked, app uninstalled): then it stops the same way and returns an
// error naming the variable to fix.
func (a *App) Run(ctx context.Context) error {
	if !a.started.CompareAndSwap(false, true) {
		return errors.New("bot: App.Run called twice")
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var refused error
	var wg sync.WaitGroup
	a.pool.run(ctx)
	wg.Go(func() { a.connectLoop(ctx) })
	wg.Go(func() { a.sweepHeld(ctx) })

	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case refused = <-a.refused:
			stop()
			done = true
		case evt := <-a.sm.Events:
			a.handle(ctx, evt)
		}
	}
	a.log.Info("bot: stopping: no new work; finishing work in flight")
	a.connected.Store(false)
	a.pool.close()
	a.formWG.Wait()
	a.spareWG.Wait()
	wg.Wait()
	a.log.Info("bot: stopped")
	return refused
}

// connectLoop keeps the Socket Mode connection up: slack-go reconnects on
// its own after a disconnect or a dead connection, and returns only when it
// cannot connect at all (e.g. a bad token); then we wait and try again.
// Before the first connection it learns which workspace and app the bot
// serves, so no request is taken before it can be checked.
func (a *App) connectLoop(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		began := a.now()
		err := a.identify(ctx)
		if err == nil {
			err = a.sm.RunContext(ctx)
		}
		if a.now().Sub(began) > time.Minute {
			backoff = time.Second
		}
		a.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		if a.tokenRefused(err) {
			return
		}
		a.log.Error("bot: Socket Mode stopped; reconnecting", "err", err, "in", backoff)
		t := a.clock.NewTimer(backoff, "bot", "reconnect")
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// identify learns the installation once.
func (a *App) identify(ctx context.Context) error {
	if a.install.Load() != nil {
		return nil
	}
	in, err := a.learnInstallation(ctx)
	if err != nil {
		return err
	}
	a.install.Store(&in)
	a.log.Info("bot: serving one Slack workspace", "team_id", in.TeamID, "app_id", in.AppID)
	return nil
}
