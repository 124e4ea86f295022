// Package roles assembles one researchbot process from the roles its
// command asks for. New opens the App (internal/app: Redis, store, queue,
// engine), builds the presenters and each role's parts; Run runs every part
// in one errgroup, each in the same shape, Run(ctx) error, and stops them in
// a fixed order. Every long-running command is a role list
// (cmd/researchbot): `researchbot serve` (Slack, Workers, Scheduler, HTTP),
// `researchbot worker` (Workers, HTTP), and the foreground commands
// `researchbot run` and `researchbot eval` (Foreground, Workers: the
// command's own job beside the workers of its private queue); the
// end-to-end tests build the same App.
//
//	New ─► app.New (Redis, store, queue, locker, engine)
//	    ─► Job.Prepare                        (Foreground: checks on the store; the job's queue)
//	    ─► presenters: Slack (one Sender), stream digests ─► App.AddPresenter
//	       (Foreground: the command's own, Config.Presenters; nothing in Slack)
//	    ─► parts, by role, in stop order:
//	         Foreground Job.Run                  (once the workers take runs; its end ends the process)
//	         Slack      bot.App.Run               (Socket Mode, routes, pool)
//	         Scheduler  scheduler.Service.Run     (stream digests, once across replicas)
//	         HTTP       obs.Server.Run            (/healthz, /readyz, /metrics; listener open in New)
//	         Workers    App.StartWorker … stop    (advance runs, claim passes, lost writes)
//	         Foreground Job.AfterWorkers          (run: mark the run interrupted on Ctrl-C)
//	         (presenters' Close, last)
//	Run ─► errgroup: every part at once; when ctx ends or any part returns
//	       (the foreground job's end), the parts stop stage by stage: the
//	       foreground job, then Slack and Scheduler, then HTTP, then Workers
//	       (steps in flight handed back: within 20 s, 1 s in the
//	       foreground), then the after-workers hook, then the presenters.
package roles

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
	"github.com/researchbot/researchbot/bot/clarify"
	"github.com/researchbot/researchbot/bot/decisions"
	"github.com/researchbot/researchbot/bot/feedback"
	"github.com/researchbot/researchbot/bot/followups"
	"github.com/researchbot/researchbot/bot/home"
	"github.com/researchbot/researchbot/bot/neverdomain"
	"github.com/researchbot/researchbot/bot/share"
	"github.com/researchbot/researchbot/bot/sharedfiles"
	"github.com/researchbot/researchbot/bot/start"
	"github.com/researchbot/researchbot/bot/steering"
	"github.com/researchbot/researchbot/bot/streams"
	"github.com/researchbot/researchbot/bot/workspacesearch"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/obs"
	"github.com/researchbot/researchbot/internal/tracing"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// Role is one job a process does.
type Role string

// The roles.
const (
	// Slack connects to Slack's Socket Mode and serves commands, clicks,
	// forms, App Home and the streams' conversations.
	Slack Role = "slack"
	// Workers advance runs from the process's queues, take over runs whose
	// worker died and offer again checkpoints lost with a Redis rollback.
	Workers Role = "workers"
	// Scheduler fires the research streams' digests (exactly once across
	// replicas).
	Scheduler Role = "scheduler"
	// HTTP serves /healthz, /readyz and /metrics on HTTP_ADDR.
	HTTP Role = "http"
	// Foreground runs the command's own job (Config.Job) at a terminal,
	// beside the Workers of its private queue: it presents its runs
	// with Config.Presenters, says nothing in Slack and searches no Slack
	// workspace, and its workers hand a step back within
	// ForegroundShutdownTimeout. The job's end ends the process.
	Foreground Role = "foreground"
)

// SlackQueue is the work queue of runs started from Slack and of stream
// digests; every replica serves it.
const SlackQueue = "runs"

// SlackTimeout bounds each Slack Web API call of a traced client (the
// bot's own default client has the same bound).
const SlackTimeout = 30 * time.Second

// Config is what a command asks of its process.
type Config struct {
	Config config.Config
	Roles  []Role
	// Queues are the queues Workers serve (default SlackQueue alone).
	Queues []string
	// NewQueue says Queues is a queue made for this process alone, new (a
	// terminal run's or eval's: app.Options.NewPrivateQueue); not for a
	// resumed run's, which may hold its timers.
	NewQueue bool
	// Presenters are the command's own presenters by Origin.Kind (the
	// terminal's), beside those New builds.
	Presenters map[string]pipeline.Presenter
	// Job is the Foreground role's job.
	Job    Job
	Logger *slog.Logger
	// Tracing records runs and Slack calls as traces; nil means none. The
	// caller shuts it down after Close.
	Tracing *tracing.Tracing
	// Open opens the App with the options New computed (the command's
	// start-up checks run beside it); nil means app.New with Config.
	Open func(context.Context, app.Options) (*app.App, error)
}

// Process is an assembled process: Run it, then Close it.
type Process struct {
	// App is the engine and its stores.
	App   *app.App
	parts []part
	// closers release what New built if Run never ran (idempotent).
	closers []func()
	ran     bool
}

// part is one component of the process, in the one shape: Run until ctx
// ends (or fail), then return. stage orders the stop.
type part struct {
	name  string
	stage stage
	run   func(ctx context.Context) error
	// verbatim: the part's error is the process's result as it is, even
	// context.Canceled once its stage is stopped (the foreground job's).
	verbatim bool
}

// stage is when a part is stopped: every part of a stage is stopped at
// once, after every part of the stages before it has returned.
type stage int

const (
	// stageForeground: the foreground command's own job (following its
	// run, asking its checkpoints), stopped first, when the process is
	// told to stop.
	stageForeground stage = iota
	// stageIntake: what takes new work from outside (Slack, the stream
	// scheduler), stopped first in a process that serves them.
	stageIntake
	// stageHTTP: the health and metrics endpoints, up while Slack drains.
	stageHTTP
	// stageWorkers: the workers, which hand the steps in flight back to the
	// queue (ShutdownTimeout) once nothing brings new work.
	stageWorkers
	// stageAfterWorkers: what must wait until no worker advances a run
	// any more (Job.AfterWorkers: a terminal run marked interrupted).
	stageAfterWorkers
	// stagePresenters: the presenters' pending flushes, once no step
	// presents anything more.
	stagePresenters
	stages
)

func (c Config) has(r Role) bool { return slices.Contains(c.Roles, r) }

// New opens the App and builds the parts of cfg.Roles. The HTTP listener
// is open when New returns. The caller must Close the Process.
func New(ctx context.Context, cfg Config) (_ *Process, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Queues) == 0 {
		cfg.Queues = []string{SlackQueue}
	}
	foreground := cfg.has(Foreground)
	if foreground && (cfg.Job.Run == nil || cfg.has(Slack) || cfg.has(Scheduler)) {
		return nil, errors.New("roles: the Foreground role needs a Job.Run, and takes neither Slack nor the Scheduler")
	}
	c := cfg.Config
	spans := cfg.Tracing
	// The process's metrics: the Slack adapter's counters join them when
	// the process serves Slack, or posts in it.
	var base *obs.Metrics
	var slackMetrics *bot.Metrics
	opts := app.Options{DefaultQueue: SlackQueue, Logger: log, Tracing: spans,
		Presenters: cfg.Presenters, NewPrivateQueue: cfg.NewQueue,
	}
	if !foreground { // a terminal's runs never search the Slack workspace
		opts.Searchers = workspacesearch.Configured(c.WorkspaceSearch, c.SlackBotToken, c.SlackAPIURL, c.WorkspaceSearchChannels, spans.SlackHTTPClient(nil, SlackTimeout))
	}
	switch {
	case cfg.has(Slack):
		slackMetrics = bot.NewMetrics()
		base = slackMetrics.Metrics
		opts.Observer, opts.Calls = slackMetrics, slackMetrics
	case foreground:
		// A foreground process counts nothing unless it serves /metrics.
		base = obs.New()
		if cfg.has(HTTP) {
			opts.Observer, opts.Calls = base, base
		}
		opts.ShutdownTimeout = ForegroundShutdownTimeout
	default:
		base = obs.New()
		opts.Observer, opts.Calls = base, base
	}
	open := cfg.Open
	if open == nil {
		open = func(ctx context.Context, o app.Options) (*app.App, error) { return app.New(ctx, c, o) }
	}
	a, err := open(ctx, opts)
	if err != nil {
		return nil, err
	}
	p := &Process{App: a}
	defer func() {
		if err != nil {
			_ = p.Close()
		}
	}()
	if foreground && cfg.Job.Prepare != nil {
		q, err := cfg.Job.Prepare(ctx, a)
		if err != nil {
			return nil, err
		}
		if q != "" {
			cfg.Queues = []string{q}
		}
	}
	clock := a.Clock()
	// slackWork: the process serves Slack, or its workers take Slack's
	// runs and stream digests (a foreground process's take only its own).
	slackWork := cfg.has(Slack) || cfg.has(Workers) && !foreground

	// The Slack presenter (and the one Sender of everything this process
	// says in Slack), when it serves Slack or its workers post there.
	var sender *bot.Sender
	var presenter *bot.Presenter
	if cfg.has(Slack) || slackWork && c.SlackBotToken != "" {
		sc := bot.SenderConfig{BotToken: c.SlackBotToken, APIURL: c.SlackAPIURL, Metrics: slackMetrics, Logger: log,
			HTTPClient: spans.SlackHTTPClient(nil, SlackTimeout), Clock: clock}
		if cfg.has(Slack) {
			sc.AppToken = c.SlackAppToken
		} else {
			sc.Metrics = bot.NewSlackMetrics(base)
		}
		sender = bot.NewSender(sc)
		presenter, err = bot.NewPresenter(bot.PresenterConfig{Sender: sender, Memory: a.DB.SlackMemory(), Admins: c.Admins, Alerts: a.Store, Logger: log,
			StreamInChannels: c.StreamInChannels, MinInterval: c.ProgressInterval, Clock: clock})
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, presenter.Close)
		a.AddPresenter(bot.OriginKind, presenter)
		p.add("slack presenter", stagePresenters, func(ctx context.Context) error {
			<-ctx.Done()
			presenter.Close()
			return nil
		})
	}
	// Research streams: digests run on the same queues; the digest
	// presenter records each one, then the Slack presenter posts it.
	streamStore := a.DB.Streams()
	if slackWork {
		digests := scheduler.DigestPresenterConfig{Store: streamStore, Logger: log, Clock: clock}
		if presenter != nil {
			digests.Inner = presenter
		}
		a.AddPresenter(scheduler.OriginKind, scheduler.NewDigestPresenter(digests))
	}
	var streamSvc *scheduler.Service
	if cfg.has(Slack) || cfg.has(Scheduler) {
		streamSvc, err = scheduler.NewService(scheduler.ServiceConfig{Store: streamStore, Runner: a.Engine, Queue: SlackQueue, Logger: log, Clock: clock})
		if err != nil {
			return nil, err
		}
	}
	var slackApp *bot.App
	if cfg.has(Slack) {
		if slackApp, err = newSlackApp(a, c, sender, slackMetrics, streamSvc, spans, log); err != nil {
			return nil, err
		}
		p.add("slack", stageIntake, func(ctx context.Context) error {
			if err := slackApp.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			log.Info("shutting down: handing steps in flight back to the queue")
			return nil
		})
	}
	if cfg.has(Scheduler) {
		p.add("scheduler", stageIntake, streamSvc.Run)
	}
	// workersUp tells the foreground job whether the workers started.
	workersUp := make(chan bool, 1)
	if cfg.has(Workers) {
		queues := slices.Clone(cfg.Queues)
		p.add("workers", stageWorkers, func(ctx context.Context) error {
			stop, err := a.StartWorker(queues)
			workersUp <- err == nil
			if err != nil {
				return err
			}
			<-ctx.Done()
			stop()
			return nil
		})
	} else {
		workersUp <- true
	}
	if foreground {
		p.addForeground(cfg.Job, workersUp)
	}
	if cfg.has(HTTP) {
		watch(base, a, slices.Sorted(slices.Values(cfg.Queues)))
		h := obs.Handler(base, redisReady(a))
		if slackApp != nil {
			h = slackApp.Handler() // its /readyz also asks whether Slack is connected
		}
		srv, err := obs.Listen(c.HTTPAddr, h, log)
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, srv.Close)
		p.add("http", stageHTTP, srv.Run)
	}
	return p, nil
}

// newSlackApp builds the Slack side: the streams' conversation and the
// Socket Mode app with its features.
func newSlackApp(a *app.App, c config.Config, sender *bot.Sender, metrics *bot.Metrics, streamSvc *scheduler.Service, spans *tracing.Tracing, log *slog.Logger) (*bot.App, error) {
	kit := bot.Kit{Sender: sender, Metrics: metrics, Logger: log, Clock: a.Clock()}
	streamsUI, err := streams.New(streams.Config{Service: streamSvc, Conversations: a.DB.Conversations(0), Model: a.StreamModel(), Kit: kit})
	if err != nil {
		return nil, err
	}
	verdicts, err := feedback.New(feedback.Config{Engine: a.Engine, Kit: kit})
	if err != nil {
		return nil, err
	}
	shares, err := share.New(share.Config{Engine: a.Engine, Memory: a.DB.SlackMemory(), Kit: kit})
	if err != nil {
		return nil, err
	}
	defaults := a.DB.ChannelDefaults()
	never, err := neverdomain.New(neverdomain.Config{Engine: a.Engine, Streams: streamSvc, Defaults: defaults, Kit: kit})
	if err != nil {
		return nil, err
	}
	startForm, err := start.New(start.Config{Defaults: defaults, Kit: kit})
	if err != nil {
		return nil, err
	}
	appHome, err := home.New(home.Config{Runs: a.Engine, Memory: a.DB.SlackMemory(), Definitions: a.Store, Admins: c.Admins, Streams: streamSvc, Kit: kit})
	if err != nil {
		return nil, err
	}
	buttons, err := decisions.New(decisions.Config{Engine: a.Engine, Admins: c.Admins, Home: appHome, Kit: kit})
	if err != nil {
		return nil, err
	}
	budget := a.DB.RateLimiter("slack")
	files, err := sharedfiles.New(sharedfiles.Config{Engine: a.Engine, Kit: kit})
	if err != nil {
		return nil, err
	}
	clarifications, err := clarify.New(clarify.Config{Engine: a.Engine, Kit: kit})
	if err != nil {
		return nil, err
	}
	steer, err := steering.New(steering.Config{Engine: a.Engine, Budget: budget, Kit: kit})
	if err != nil {
		return nil, err
	}
	followUps, err := followups.New(followups.Config{Engine: a.Engine, Budget: budget, Kit: kit})
	if err != nil {
		return nil, err
	}
	panel, err := assistant.New(assistant.Config{Memory: a.DB.SlackMemory(), Streams: streamsUI, Mentions: streamsUI, Kit: kit})
	if err != nil {
		return nil, err
	}
	return bot.New(bot.Config{
		AppToken: c.SlackAppToken, BotToken: c.SlackBotToken, APIURL: c.SlackAPIURL, Sender: sender,
		Engine: a.Engine, Memory: a.DB.SlackMemory(), Budget: budget, Metrics: metrics,
		Limits: bot.RateLimits{PerUser: bot.PerHour(c.UserRunsPerHour), PerWorkspace: bot.PerHour(c.TeamRunsPerHour)},
		Logger: log, HTTPClient: spans.SlackHTTPClient(nil, SlackTimeout),
		Checkpoints: bot.CheckpointsConfig{Approvers: c.Approvers, ReviewSources: c.ReviewSources,
			Decisions: decisionTracer(spans)},
		Clarify:   clarifications,
		Steering:  steer,
		FollowUps: followUps,
		Streams:   bot.StreamsUIConfig{Handler: streamsUI, Mentions: streamsUI},
		Home:      appHome,
		Files:     files,
		Assistant: panel,
		Start:     bot.StartConfig{Defaults: defaults, WorkspaceSearch: c.WorkspaceSearch},
		Features:  []bot.Registrar{buttons, startForm, verdicts, shares, never, followUps},
		Clock:     kit.Clock,
	})
}

// decisionTracer is what records serve's decisions in their runs' traces:
// spans, or nil when tracing is off (the bot records none).
func decisionTracer(spans *tracing.Tracing) bot.DecisionTracer {
	if spans == nil {
		return nil
	}
	return spans
}

func (p *Process) add(name string, s stage, run func(context.Context) error) {
	p.parts = append(p.parts, part{name: name, stage: s, run: run})
}

// Close releases what the Process holds: the presenters' flushes and the
// HTTP listener if Run never ran, then the App (Redis, queue, MCP sessions).
func (p *Process) Close() error {
	if !p.ran {
		for _, c := range slices.Backward(p.closers) {
			c()
		}
	}
	return p.App.Close()
}
