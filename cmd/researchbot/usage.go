package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one subcommand as help shows it.
type command struct {
	name     string // as typed: "runs prune"
	synopsis string // the arguments after the name
	summary  string // one line, for the list of commands
	about    string // what `researchbot help NAME` adds; may be empty
}

// commands is every subcommand, in the order help lists them. Each
// command's own -h and `researchbot help NAME` print its entry.
var commands = []command{
	{"run", `[flags] "<question>"`, "research in the terminal", "Researches the question, asking you at the checkpoints of the mode, and prints the\nreport on stdout (progress and questions on stderr). --resume RUN_ID continues a\nrun after the process stopped."},
	{"runs", "[--limit N] [--feedback] [--json]", "list runs with status, age and spend", "--feedback lists what people said about the reports (👍 / 👎, reasons) instead."},
	{"runs prune", "", "forget expired runs; expire old finished ones", "RUN_RETENTION and RUN_PAGE_RETENTION say what is kept."},
	{"status", "[--json] RUN_ID", "one run: status, step, spend, question", "The same as /research status RUN in Slack; --json prints the fields of 'runs --json'."},
	{"ask", `RUN_ID "<question>"`, "a follow-up question, answered from the run's sources", "Answers from the pages the run's report cites, each citation checked against the page;\nthe answer and its cost are saved with the run. When the sources do not answer, it\nsays so and how to research the question."},
	{"serve", "", "run the Slack bot (Socket Mode) and workers", "Checks Slack, Redis and the model endpoint at start, then serves /healthz, /readyz\nand /metrics on HTTP_ADDR. Configured by environment variables only."},
	{"worker", "[--queues runs]", "run workers only (more capacity; needs REDIS_URL)", "Checks Redis, the model endpoint and (for the runs queue) SLACK_BOT_TOKEN at start,\nthen serves /healthz, /readyz and /metrics on HTTP_ADDR."},
	{"checkpoints", "[fields|show|create|update|delete|enable|disable|timeout|reset|skip …]", "see and manage checkpoint definitions", strings.TrimPrefix(checkpointsUsage, "Usage:\n")},
	{"env", "", "every variable: current value (secrets masked), source, meaning", ""},
	{"sources", "[--timeout D]", "list and check every search backend (web, MCP, documents); exit 0 or 1", sourcesAbout},
	{"docs", "index|status|search …", "the document collection of DOCS_DIR: index it, see it, search it", docsAbout},
	{"docs index", "", "read added and changed documents, drop removed ones", "Only files whose size or modification time changed are read again. Exit 1 when a\nfolder cannot be read (its documents are kept as they were)."},
	{"docs status", "[--json]", "documents, skipped files and why, index age", "Read from what the last check left: it works while serve or worker holds the index."},
	{"docs search", `[--limit N] [--json] "<query>"`, "search the collection as a run does", "Lists the documents found, best first, each with its best-matching page."},
	{"eval", "[--json] [--questions FILE] [--corpus DIR] [--depth D]", "grade the configured model on built-in questions over a shipped collection", evalAbout},
	{"healthcheck", "[--path P] [--timeout D]", "ask the local serve or worker's /healthz (exit 0 or 1)", healthcheckAbout},
	{"completion", "bash|zsh|fish", "print the shell completion script", "bash: source <(researchbot completion bash); zsh: the same with zsh; fish: researchbot completion fish | source."},
	{"version", "", "version, commit and Go version (also --version)", ""},
	{"help", "[COMMAND]", "this text, or a command's", ""},
}

// lookup returns the command named name ("runs prune" included).
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames is the first word of every command, for suggestions.
func commandNames() []string {
	var names []string
	for _, c := range commands {
		if first, _, _ := strings.Cut(c.name, " "); !slices.Contains(names, first) {
			names = append(names, first)
		}
	}
	return names
}

// usage is the program's help: every command and where configuration is.
func usage() string {
	var b strings.Builder
	b.WriteString("researchbot — trustworthy, cited research with a human in control.\n\nUsage:\n")
	for _, c := range commands {
		left := strings.TrimSpace("researchbot " + c.name + " " + c.synopsis)
		if len(left) > 40 {
			fmt.Fprintf(&b, "  %s\n  %-40s %s\n", left, "", c.summary)
			continue
		}
		fmt.Fprintf(&b, "  %-40s %s\n", left, c.summary)
	}
	b.WriteString("\nRun 'researchbot help COMMAND' for a command's flags. Configuration is by\nenvironment variables (see 'researchbot env' and the README).\n")
	return b.String()
}

// commandUsage is one command's help, with fs's flags when it has any.
func commandUsage(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintln(w, "Usage: "+strings.TrimSpace("researchbot "+c.name+" "+c.synopsis))
	fmt.Fprintf(w, "\n%s%s.\n", strings.ToUpper(c.summary[:1]), c.summary[1:])
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.about, "\n"))
	}
	hasFlags := false
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	}
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// helped is returned when a command printed its help: the program exits 0.
var helped = &exitError{code: 0}

// usageError reports a mistake in the command line on stderr in the one
// style every command uses, and exits 2.
func usageError(stderr io.Writer, name, format string, args ...any) error {
	hint := "researchbot help " + name
	if name == "help" {
		hint = "researchbot help"
	}
	fmt.Fprintf(stderr, "researchbot %s: %s\nRun '%s' for usage.\n", name, fmt.Sprintf(format, args...), hint)
	return &exitError{code: 2}
}

// newFlags makes a command's flag set; parseFlags reports its errors.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses a command's arguments. -h prints the command's help on
// stdout (the error is helped: exit 0); a bad flag is a usage error. With
// interspersed, flags may come between and after the positional words,
// which are returned.
func parseFlags(fs *flag.FlagSet, name string, args []string, interspersed bool, stdout, stderr io.Writer) ([]string, error) {
	c, _ := lookup(name)
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				commandUsage(stdout, c, fs)
				return nil, helped
			}
			return nil, usageError(stderr, name, "%s", flagProblem(fs, err))
		}
		rest := fs.Args()
		if !interspersed || len(rest) == 0 {
			return append(words, rest...), nil
		}
		words = append(words, rest[0])
		args = rest[1:]
	}
}

// noArgs parses a command that takes no arguments (only -h).
func noArgs(name string, args []string, stdout, stderr io.Writer) error {
	rest, err := parseFlags(newFlags(name), name, args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, name, "takes no arguments (got %q)", rest[0])
	}
	return nil
}
