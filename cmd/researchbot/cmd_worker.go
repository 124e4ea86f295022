package main

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/app/roles"
)

// cmdWorker advances runs without connecting to Slack's socket: extra
// replicas that add research capacity (the roles Workers and HTTP). It
// posts progress, checkpoints and reports of Slack runs and stream digests
// like serve does, so taking the Slack queue ("runs", the default) needs
// SLACK_BOT_TOKEN: without it the worker refuses to start rather than
// finish runs nobody sees. Other queues (those of terminal runs, given with
// --queues) need no token.
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
	var qs []string
	for _, q := range strings.Split(*queues, ",") {
		if q = strings.TrimSpace(q); q != "" && !slices.Contains(qs, q) {
			qs = append(qs, q)
		}
	}
	log := bootLogger(getenv, stderr)
	defer func() { err = logExit(log, jsonLogs(getenv), err) }()
	if slices.Contains(qs, slackQueue) && strings.TrimSpace(getenv("SLACK_BOT_TOKEN")) == "" {
		return &exitError{code: 2, msg: "researchbot worker: the " + slackQueue + " queue holds Slack runs and stream digests, which must be posted to Slack: " +
			"set SLACK_BOT_TOKEN, or give --queues without " + slackQueue + " (for example the queue of terminal runs)"}
	}
	cfg, err := loadConfig(getenv, config.Config.CheckLLM)
	if err != nil {
		return err
	}
	log = newLogger(cfg, stderr)
	spans, stopTracing, err := startTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	p, err := roles.New(ctx, roles.Config{
		Config: cfg, Roles: []roles.Role{roles.Workers, roles.HTTP},
		Queues: qs, Logger: log, Tracing: spans,
		Open: func(ctx context.Context, opts app.Options) (*app.App, error) {
			a, err := openChecked(ctx, cfg, dependencies{slackBot: cfg.SlackBotToken != "", llm: true}, opts)
			if err == nil && a.Conn.Embedded {
				_ = a.Close()
				return nil, &exitError{code: 2, msg: "researchbot worker needs REDIS_URL: a worker with its own in-process Redis would have no runs to work on"}
			}
			return a, err
		},
	})
	if err != nil {
		return err
	}
	defer p.Close()
	log.Info("researchbot worker taking runs", "queues", *queues, "version", versionLine(version, commit, buildInfo()))
	return p.Run(ctx)
}
