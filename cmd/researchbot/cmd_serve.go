package main

import (
	"context"
	"errors"
	"io"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/workspacesearch"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// slackQueue is the work queue of runs started from Slack; every replica serves it.
const slackQueue = "runs"

// cmdServe runs the Slack bot with the engine's workers in the same process.
// On SIGTERM it stops taking work, hands the steps in flight back to the
// queue, and closes cleanly; another replica (or the next start) goes on.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	if err := noArgs("serve", args, stdout, stderr); err != nil {
		return err
	}
	log := bootLogger(getenv, stderr)
	defer func() { err = logExit(log, jsonLogs(getenv), err) }()
	cfg, err := loadConfig(getenv, config.Config.CheckLLM, config.Config.CheckSlack)
	if err != nil {
		return err
	}
	log = newLogger(cfg, stderr)
	metrics := bot.NewMetrics()
	spans, stopTracing, err := startTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	a, err := openChecked(ctx, cfg, dependencies{slackBot: true, slackApp: true, llm: true}, app.Options{
		DefaultQueue: slackQueue, Observer: metrics, Calls: metrics, Logger: log, Tracing: spans,
		Searchers: workspacesearch.Configured(cfg.WorkspaceSearch, cfg.SlackBotToken, cfg.SlackAPIURL, cfg.WorkspaceSearchChannels, spans.SlackHTTPClient(nil, slackTimeout)),
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if a.Conn.Embedded {
		log.Warn("REDIS_URL is not set: using an in-process Redis; runs, checkpoints and streams will not survive a restart, and replicas cannot share work")
	}
	log.Info("search backends active", "backends", a.Backends)
	watch(metrics.Metrics, a, []string{slackQueue})

	// One Web API client for everything this process says in Slack.
	sender := bot.NewSender(bot.SenderConfig{
		BotToken: cfg.SlackBotToken, AppToken: cfg.SlackAppToken, APIURL: cfg.SlackAPIURL, Metrics: metrics, Logger: log,
		HTTPClient: spans.SlackHTTPClient(nil, slackTimeout),
		Clock:      a.Clock(),
	})
	memory := redisstore.NewSlackMemory(a.Conn.Client)
	presenter, err := bot.NewPresenter(bot.PresenterConfig{Sender: sender, Memory: memory, Admins: cfg.Admins, Alerts: a.Store, Logger: log,
		StreamInChannels: cfg.StreamInChannels, MinInterval: cfg.ProgressInterval,
		Clock: a.Clock()})
	if err != nil {
		return err
	}
	defer presenter.Close()
	a.AddPresenter(bot.OriginKind, presenter)

	// Research streams: the service (scheduling, exactly once across replicas),
	// the digest presenter (records each digest, then the Slack presenter posts
	// it), and the Slack conversation that creates them.
	streamStore := redisstore.NewStreams(a.Conn.Client, "rb:")
	a.AddPresenter(scheduler.OriginKind, scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{
		Store: streamStore, Inner: presenter, Logger: log,
		Clock: a.Clock(),
	}))
	streamSvc, err := scheduler.NewService(scheduler.ServiceConfig{Store: streamStore, Runner: a.Engine, Queue: slackQueue, Logger: log,
		Clock: a.Clock()})
	if err != nil {
		return err
	}
	streams, err := bot.NewStreams(bot.StreamsConfig{
		Sender: sender, Service: streamSvc,
		Conversations: redisstore.NewConversations(a.Conn.Client, "rb:", 0),
		Model:         a.StreamModel(), Logger: log,
		Clock: a.Clock(),
	})
	if err != nil {
		return err
	}

	slackApp, err := bot.New(bot.Config{
		AppToken: cfg.SlackAppToken, BotToken: cfg.SlackBotToken, APIURL: cfg.SlackAPIURL, Sender: sender,
		Engine: a.Engine, Decisions: decisionTracer(spans), Memory: memory, Budget: redisstore.NewRateLimiter(a.Conn.Client, "slack"),
		Metrics: metrics, Approvers: cfg.Approvers, Admins: cfg.Admins, ReviewSources: cfg.ReviewSources,
		Limits:          bot.RateLimits{PerUser: bot.PerHour(cfg.UserRunsPerHour), PerWorkspace: bot.PerHour(cfg.TeamRunsPerHour)},
		WorkspaceSearch: cfg.WorkspaceSearch,
		HealthAddr:      cfg.HTTPAddr, Logger: log, HTTPClient: spans.SlackHTTPClient(nil, slackTimeout),
		Streams: streams, Mentions: streams, Asker: a.Engine, Steerer: a.Engine, Files: a.Engine,
		Checkpoints: a.Store, StreamList: streamSvc, StreamDomains: streamSvc,
		StartDefaults: redisstore.NewChannelDefaults(a.Conn.Client, "rb:"),
		Clock:         a.Clock(),
	})
	if err != nil {
		return err
	}
	stopWorker, err := a.StartWorker(map[string]int{slackQueue: 1})
	if err != nil {
		return err
	}
	defer stopWorker()
	// The stream scheduler is owned here: it stops with the bot.
	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		_ = streamSvc.Run(schedCtx)
	}()
	defer func() {
		stopSched()
		<-schedDone
	}()
	log.Info("researchbot serving Slack", "http_addr", cfg.HTTPAddr, "version", versionLine(version, commit, buildInfo()))
	if err := slackApp.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("shutting down: handing steps in flight back to the queue")
	return nil
}
