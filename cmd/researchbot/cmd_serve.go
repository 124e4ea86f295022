package main

import (
	"context"
	"io"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/app/roles"
)

// slackQueue is the work queue of runs started from Slack; every replica serves it.
const slackQueue = roles.SlackQueue

// cmdServe runs the Slack bot with the engine's workers in the same process:
// the roles Slack, Workers, Scheduler and HTTP.
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
	spans, stopTracing, err := startTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	p, err := roles.New(ctx, roles.Config{
		Config: cfg, Roles: []roles.Role{roles.Slack, roles.Workers, roles.Scheduler, roles.HTTP},
		Queues: []string{slackQueue}, Logger: log, Tracing: spans,
		Open: func(ctx context.Context, opts app.Options) (*app.App, error) {
			a, err := openChecked(ctx, cfg, dependencies{slackBot: true, slackApp: true, llm: true}, opts)
			if err != nil {
				return nil, err
			}
			if a.Conn.Embedded {
				log.Warn("REDIS_URL is not set: using an in-process Redis; runs, checkpoints and streams will not survive a restart, and replicas cannot share work")
			}
			log.Info("search backends active", "backends", a.Backends)
			return a, nil
		},
	})
	if err != nil {
		return err
	}
	defer p.Close()
	log.Info("researchbot serving Slack", "http_addr", cfg.HTTPAddr, "version", versionLine(version, commit, buildInfo()))
	return p.Run(ctx)
}
