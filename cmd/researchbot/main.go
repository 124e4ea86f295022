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
	"strings"
	"syscall"
	_ "time/tzdata" // streams' time zones load even on images without zoneinfo
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode writes what ends the program with err to stderr and returns the
// exit status: 0 for nil, an exitError's own code and message, else 1 with
// "researchbot: " and the error.
func exitCode(err error, stderr io.Writer) int {
	var exit *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if exit.msg != "" {
			fmt.Fprintln(stderr, exit.msg)
		}
		return exit.code
	default:
		fmt.Fprintln(stderr, "researchbot:", err)
		return 1
	}
}

// exitError ends the program with a code and a message already written or to write.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// run is the whole program, with its environment passed in. A command that
// printed its help returns nil (exit 0).
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, getenv, stdin, stdout, stderr)
	if errors.Is(err, helped) {
		return nil
	}
	return err
}

// dispatch runs the command args name.
func dispatch(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return &exitError{code: 2}
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "runs":
		return cmdRuns(ctx, args[1:], getenv, stdout, stderr)
	case "status":
		return cmdStatus(ctx, args[1:], getenv, stdout, stderr)
	case "ask":
		return cmdAsk(ctx, args[1:], getenv, stdout, stderr)
	case "serve":
		return cmdServe(ctx, args[1:], getenv, stdout, stderr)
	case "worker":
		return cmdWorker(ctx, args[1:], getenv, stdout, stderr)
	case "checkpoints":
		if len(args) > 1 && isHelpFlag(args[1]) {
			c, _ := lookup("checkpoints")
			commandUsage(stdout, c, nil)
			return helped
		}
		return cmdCheckpoints(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "env":
		return cmdEnv(args[1:], getenv, stdout, stderr)
	case "sources":
		return cmdSources(ctx, args[1:], getenv, stdout, stderr)
	case "docs":
		return cmdDocs(ctx, args[1:], getenv, stdout, stderr)
	case "eval":
		return cmdEval(ctx, args[1:], getenv, stdout, stderr)
	case "healthcheck":
		return cmdHealthcheck(ctx, args[1:], getenv, stdout, stderr)
	case "completion":
		return cmdCompletion(args[1:], stdout, stderr)
	case "__complete": // called by the completion scripts
		return cmdComplete(ctx, args[1:], getenv, stdout)
	case "version", "--version":
		return cmdVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		return cmdHelp(ctx, args[1:], getenv, stdout, stderr)
	default:
		return unknownCommand(stderr, "researchbot", args[0], commandNames())
	}
}

// cmdHelp prints the program's help, or a command's ("help runs prune"),
// on stdout.
func cmdHelp(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage())
		return nil
	}
	if isHelpFlag(args[0]) {
		args = []string{"help"}
	}
	name := strings.Join(args, " ")
	c, ok := lookup(name)
	switch {
	case !ok:
		var names []string
		for _, c := range commands {
			names = append(names, c.name)
		}
		return usageError(stderr, "help", "there is no command %q%s", name, suggestion(name, names))
	case name == "help":
		commandUsage(stdout, c, nil)
		return helped
	}
	// The command prints its own help, with its flags.
	return dispatch(ctx, append(strings.Fields(name), "-h"), getenv, nil, stdout, stderr)
}
