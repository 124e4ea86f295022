package main

import (
	"errors"
	"io"
	"log/slog"
	"strings"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/redisstore"
)

// newLogger makes the program's logger, and routes go-redis's own log lines
// (connection retries) into it, quietly, so every line is structured and an
// outage of Redis is not a storm of lines.
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	log := slog.New(newHandler(cfg.LogFormat, cfg.LogLevel, w))
	redisstore.RouteRedisLogs(log)
	return log
}

// newHandler is the slog handler of a format (text or json) and level.
func newHandler(format, level string, w io.Writer) slog.Handler {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// bootLogger is the logger of a long-running command before its
// configuration is read: LOG_FORMAT as given (text when it is not json), so
// that even the configuration's problems come out in the chosen format.
func bootLogger(getenv func(string) string, w io.Writer) *slog.Logger {
	return slog.New(newHandler(strings.ToLower(strings.TrimSpace(getenv("LOG_FORMAT"))), "info", w))
}

// jsonLogs reports whether the command's lines must all be JSON.
func jsonLogs(getenv func(string) string) bool {
	return strings.EqualFold(strings.TrimSpace(getenv("LOG_FORMAT")), "json")
}

// logExit makes the end of serve or worker a log record when the logs are
// JSON: every problem of an exit message ("  - …" lines) is one record
// naming it, and the program then exits with the same code and nothing
// more to print. With text logs the message stays as it is, for people.
func logExit(log *slog.Logger, asJSON bool, err error) error {
	if err == nil || !asJSON {
		return err
	}
	var exit *exitError
	if !errors.As(err, &exit) {
		log.Error("stopped", "err", err)
		return &exitError{code: 1}
	}
	if exit.msg == "" {
		return err
	}
	var summary string
	var problems []string
	for _, line := range strings.Split(exit.msg, "\n") {
		switch p, ok := strings.CutPrefix(line, "  - "); {
		case ok:
			problems = append(problems, p)
		case summary == "":
			summary = strings.TrimSuffix(strings.TrimPrefix(line, "researchbot: "), ":")
		}
	}
	if len(problems) == 0 {
		log.Error(summary, "exit_code", exit.code)
	}
	for _, p := range problems {
		log.Error(summary, "problem", p, "exit_code", exit.code)
	}
	return &exitError{code: exit.code}
}
