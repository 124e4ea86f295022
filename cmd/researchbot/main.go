// Command researchbot is a research assistant: `researchbot run "<question>"`
// researches in the terminal, `researchbot serve` runs the Slack bot.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // streams' time zones load even on images without zoneinfo
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	var exit *exitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		if exit.msg != "" {
			fmt.Fprintln(os.Stderr, exit.msg)
		}
		os.Exit(exit.code)
	default:
		fmt.Fprintln(os.Stderr, "researchbot:", err)
		os.Exit(1)
	}
}

// exitError ends the program with a code and a message already written or to write.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

const usage = `researchbot — trustworthy, cited research with a human in control.

Usage:
  researchbot run [flags] "<question>"   research in the terminal
  researchbot run --resume RUN_ID        continue a run after the process stopped
  researchbot runs [--limit N]           list runs with status, age and spend
  researchbot ask RUN_ID "<question>"    a follow-up question, answered from the run's sources
  researchbot runs --feedback [--limit N]  what people said about the reports (👍 / 👎, reasons)
  researchbot runs prune                 forget expired runs; expire old finished ones
  researchbot serve                      run the Slack bot (Socket Mode) and workers
  researchbot worker [--queues runs]     run workers only (more capacity; needs REDIS_URL)
  researchbot checkpoints [enable|disable|timeout ID …]
                                         see and change checkpoint definitions
  researchbot env                        list the environment variables it reads
  researchbot healthcheck [--path P]     ask the local serve's /healthz (exit 0 or 1)
  researchbot version                    version, commit and Go version (also --version)
  researchbot help                       this text

Run 'researchbot run -h' for the run flags. Configuration is by environment
variables (see 'researchbot env' and the README).
`

// run is the whole program, with its environment passed in.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2}
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "runs":
		return cmdRuns(ctx, args[1:], getenv, stdout, stderr)
	case "ask":
		return cmdAsk(ctx, args[1:], getenv, stdout, stderr)
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout, stderr)
	case "worker":
		return cmdWorker(ctx, args[1:], getenv, stderr)
	case "checkpoints":
		return cmdCheckpoints(ctx, args[1:], getenv, stdout, stderr)
	case "env":
		return cmdEnv(stdout)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version":
		return cmdVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "researchbot: unknown command %q\n\n%s", args[0], usage)
		return &exitError{code: 2}
	}
}
