package main

import (
	"context"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/workspacesearch"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/obs"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// cmdWorker advances runs without connecting to Slack's socket: extra
// replicas that add research capacity. It posts progress, checkpoints and
// reports of Slack runs and stream digests like serve does, so taking the
// Slack queue ("runs", the default) needs SLACK_BOT_TOKEN: without it the
// worker refuses to start rather than finish runs nobody sees. Other queues
// (those of terminal runs, given with --queues) need no token.
func cmdWorker(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("worker")
	queues := fs.String("queues", slackQueue, "comma-separated queues to take runs from")
	rest, err := parseFlags(fs, "worker", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "worker", "unexpected argument %q", rest[0])
	}
	qs := map[string]int{}
	for _, q := range strings.Split(*queues, ",") {
		if q = strings.TrimSpace(q); q != "" {
			qs[q] = 1
		}
	}
	log := bootLogger(getenv, stderr)
	defer func() { err = logExit(log, jsonLogs(getenv), err) }()
	if _, slack := qs[slackQueue]; slack && strings.TrimSpace(getenv("SLACK_BOT_TOKEN")) == "" {
		return &exitError{code: 2, msg: "researchbot worker: the " + slackQueue + " queue holds Slack runs and stream digests, which must be posted to Slack: " +
			"set SLACK_BOT_TOKEN, or give --queues without " + slackQueue + " (for example the queue of terminal runs)"}
	}
	cfg, err := loadConfig(getenv, config.Config.CheckLLM)
	if err != nil {
		return err
	}
	log = newLogger(cfg, stderr)
	metrics := obs.New()
	spans, stopTracing, err := startTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	a, err := openChecked(ctx, cfg, dependencies{slackBot: cfg.SlackBotToken != "", llm: true}, app.Options{
		DefaultQueue: slackQueue, Observer: metrics, Calls: metrics, Logger: log, Tracing: spans,
		Searchers: workspacesearch.Configured(cfg.WorkspaceSearch, cfg.SlackBotToken, cfg.SlackAPIURL, cfg.WorkspaceSearchChannels, spans.SlackHTTPClient(nil, slackTimeout)),
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if a.Conn.Embedded {
		return &exitError{code: 2, msg: "researchbot worker needs REDIS_URL: a worker with its own in-process Redis would have no runs to work on"}
	}
	// Digests of research streams run on the same queues: record them, and
	// post them when Slack is configured.
	digests := scheduler.DigestPresenterConfig{Store: redisstore.NewStreams(a.Conn.Client, "rb:"), Logger: log, Clock: a.Clock()}
	if cfg.SlackBotToken != "" {
		presenter, err := bot.NewPresenter(bot.PresenterConfig{
			BotToken: cfg.SlackBotToken, APIURL: cfg.SlackAPIURL, Memory: redisstore.NewSlackMemory(a.Conn.Client),
			Metrics: bot.NewSlackMetrics(metrics), Admins: cfg.Admins, Alerts: a.Store, Logger: log,
			HTTPClient:       spans.SlackHTTPClient(nil, slackTimeout),
			StreamInChannels: cfg.StreamInChannels, MinInterval: cfg.ProgressInterval,
			Clock: a.Clock(),
		})
		if err != nil {
			return err
		}
		defer presenter.Close()
		a.AddPresenter(bot.OriginKind, presenter)
		digests.Inner = presenter
	}
	a.AddPresenter(scheduler.OriginKind, scheduler.NewDigestPresenter(digests))
	stop, err := a.StartWorker(qs)
	if err != nil {
		return err
	}
	defer stop()
	watch(metrics, a, slices.Sorted(maps.Keys(qs)))
	stopHTTP, err := obs.Serve(cfg.HTTPAddr, obs.Handler(metrics, redisReady(a)), log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	log.Info("researchbot worker taking runs", "queues", *queues, "version", versionLine(version, commit, buildInfo()))
	<-ctx.Done()
	return nil
}
