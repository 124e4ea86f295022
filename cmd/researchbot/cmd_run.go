package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/terminal"
)

// loadConfig reads the configuration and turns problems into one clear exit.
func loadConfig(getenv func(string) string, stderr io.Writer, checks ...func(config.Config) error) (config.Config, error) {
	cfg, err := config.Load(getenv)
	var problems []error
	if err != nil {
		problems = append(problems, err)
	}
	for _, check := range checks {
		if err := check(cfg); err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, "researchbot: the configuration has problems:")
		for _, line := range strings.Split(errors.Join(problems...).Error(), "\n") {
			fmt.Fprintln(stderr, "  -", line)
		}
		fmt.Fprintln(stderr, "See 'researchbot env' or the README for every variable.")
		return cfg, &exitError{code: 2}
	}
	return cfg, nil
}

// newLogger makes the program's logger, and routes go-redis's own log lines
// (connection retries) into it, quietly, so every line is structured and an
// outage of Redis is not a storm of lines.
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	if cfg.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(w, opts))
	} else {
		log = slog.New(slog.NewTextHandler(w, opts))
	}
	redisstore.RouteRedisLogs(log)
	return log
}

func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mode := fs.String("mode", checkpoints.ModeGuided, "checkpoints: auto (none), guided (plan, critical issues, draft) or full (all)")
	depth := fs.String("depth", "standard", "quick, standard or comprehensive")
	reviewSources := fs.Bool("review-sources", false, "in guided mode, review the sources before they are read (full mode always does)")
	maxCost := -1.0 // unset: RUN_MAX_COST_USD applies
	fs.Func("max-cost", "spend limit of this run in USD (default: RUN_MAX_COST_USD)", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return fmt.Errorf("want a non-negative number of dollars, such as 0.50")
		}
		maxCost = f
		return nil
	})
	maxIter := fs.Int("max-iterations", 0, "revision and re-plan limit (default RUN_MAX_ITERATIONS)")
	resume := fs.String("resume", "", "continue the run with this id")
	outFile := fs.String("o", "", "write the report to this file instead of stdout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: researchbot run [flags] \"<question>\"\n       researchbot run --resume RUN_ID\n\nFlags:")
		fs.PrintDefaults()
	}
	words, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: 2}
	}
	question := strings.TrimSpace(strings.Join(words, " "))
	if *resume == "" && question == "" {
		fs.Usage()
		return &exitError{code: 2, msg: "researchbot run: give a question, or --resume RUN_ID"}
	}
	queue := app.TerminalQueuePrefix + randomSuffix()
	req := pipeline.Request{
		Question: question, Mode: *mode, Depth: pipeline.Depth(*depth), RequestedBy: "terminal", ReviewSources: *reviewSources,
		Origin: pipeline.Origin{Kind: "terminal", Queue: queue},
		Limits: limitsFromFlags(maxCost, *maxIter),
	}
	if *resume == "" {
		if err := pipeline.ValidateRequest(req); err != nil {
			return &exitError{code: 2, msg: "researchbot: " + err.Error()}
		}
	}
	cfg, err := loadConfig(getenv, stderr, config.Config.CheckLLM)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	if cfg.LogLevel == "info" {
		log = newLogger(config.Config{LogLevel: "warn", LogFormat: cfg.LogFormat}, stderr)
	}
	presenter := terminal.New(stderr)
	// A person who presses Ctrl-C wants the prompt back: the step in flight is
	// handed back at once (it is redone on --resume).
	a, err := app.New(ctx, cfg, app.Options{
		Presenters: map[string]pipeline.Presenter{"terminal": presenter}, Logger: log, ShutdownTimeout: time.Second,
		NewPrivateQueue: *resume == "", // a resumed run's queue may hold its timers
	})
	if err != nil {
		return err
	}
	defer a.Close()
	if a.Conn.Embedded {
		fmt.Fprintln(stderr, "note: REDIS_URL is not set, so researchbot uses an in-process Redis: this run's state will not survive the process.")
	}
	if len(a.Backends) > 0 {
		fmt.Fprintf(stderr, "search backends: %s\n", strings.Join(a.Backends, ", "))
	}

	var r *pipeline.Run
	if *resume != "" {
		r, err = a.Engine.Load(ctx, *resume)
		if errors.Is(err, pipeline.ErrNotFound) {
			return &exitError{code: 1, msg: fmt.Sprintf("researchbot: there is no run %q here (is REDIS_URL the same as when it started?)", *resume)}
		}
		if err != nil {
			return err
		}
		if r.Origin.Kind != "terminal" {
			return &exitError{code: 2, msg: fmt.Sprintf("researchbot: run %s was started from %s, not from a terminal: answer its checkpoints there (it is %s at %s)", r.ID, originName(r.Origin.Kind), r.Status, r.Step)}
		}
	}
	if r != nil {
		queue = r.Origin.Queue
	}
	stopWorker, err := a.StartWorker(map[string]int{queue: 1})
	if err != nil {
		return err
	}
	defer stopWorker()

	if r == nil {
		r, err = a.Engine.Start(ctx, req)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "run %s started (mode %s, depth %s)\n", r.ID, r.Mode, r.Depth)
	} else {
		if r.Status.Final() {
			fmt.Fprintf(stderr, "run %s has already finished (%s)\n", r.ID, r.Status)
			return writeOutcome(r, *outFile, stdout, stderr)
		}
		fmt.Fprintf(stderr, "resuming run %s (%s at %s)\n", r.ID, r.Status, r.Step)
		if _, err := a.Engine.Resume(ctx, r.ID); err != nil {
			return err
		}
	}
	prompter := terminal.NewPrompter(stdin, stderr)
	prompter.Editor = getenv("EDITOR")
	if getenv("RESEARCHBOT_NO_EDITOR") != "" {
		prompter.Editor = ""
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	err = follow(ctx, a.Engine, a.Store.Watch(watchCtx, r.ID, 0), terminal.NewFollower(stderr, nil), prompter, r.ID, !a.Conn.Embedded, *outFile, stdout, stderr)
	stopWatching()
	if ctx.Err() != nil || err != nil {
		// The person stopped (or the run could not be followed): hand the
		// step in flight back, then mark the run interrupted so it is listed
		// as such and nobody takes it until --resume.
		stopWorker()
		ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if ierr := a.Engine.Interrupt(ictx, r.ID); ierr != nil {
			log.Info("could not mark the run interrupted", "run", r.ID, "err", ierr)
		}
	}
	return err
}

// parseInterspersed parses flags before, between and after the words of the
// question ("researchbot run "q" --mode auto" works), and returns the words.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return words, nil
		}
		words = append(words, rest[0])
		args = rest[1:]
	}
}

func limitsFromFlags(maxCost float64, maxIter int) pipeline.Limits {
	l := pipeline.Limits{MaxIterations: maxIter}
	if maxCost >= 0 {
		l.MaxCostUSD = maxCost
	}
	return l
}

func randomSuffix() string { return strings.TrimPrefix(pipeline.NewRunID(), "r-") }

// follow shows the run as the store sees it, whichever process advances
// it, and answers its checkpoints, until it finishes or the person stops.
func follow(ctx context.Context, eng *pipeline.Engine, runs <-chan *pipeline.Run, f *terminal.Follower, pr *terminal.Prompter, runID string, durable bool, outFile string, stdout, stderr io.Writer) error {
	resumeHint := func(what string) string {
		if !durable {
			return fmt.Sprintf("\n%s. The run's state was in the in-process Redis and is gone; set REDIS_URL to make runs resumable.", what)
		}
		return fmt.Sprintf("\n%s. Everything so far is saved; continue with:\n  researchbot run --resume %s", what, runID)
	}
	interrupted := func() error { return &exitError{code: 130, msg: resumeHint("stopped")} }
	for {
		var r *pipeline.Run
		select {
		case <-ctx.Done():
			return interrupted()
		case got, ok := <-runs:
			if !ok {
				return interrupted()
			}
			r = got
		}
		inst := f.Observe(r)
		if r.Status.Final() {
			return writeOutcome(r, outFile, stdout, stderr)
		}
		if inst == nil {
			continue
		}
		var fieldErrs []checkpoints.FieldError
		for {
			d, err := pr.Ask(ctx, *inst, fieldErrs)
			if ctx.Err() != nil {
				return interrupted()
			}
			if errors.Is(err, terminal.ErrNoInput) {
				return &exitError{code: 3, msg: resumeHint(fmt.Sprintf("no answer on standard input; the run waits at %q", inst.Label))}
			}
			switch {
			case errors.Is(err, terminal.ErrSkip):
				_, err = eng.Skip(ctx, inst.ID, pr.By)
			case err != nil:
				fmt.Fprintln(stderr, err)
				continue
			default:
				_, err = eng.Decide(ctx, inst.ID, d)
			}
			var verr *checkpoints.ValidationError
			switch {
			case errors.As(err, &verr):
				fieldErrs = verr.Fields
				continue
			case errors.Is(err, checkpoints.ErrAlreadyDecided), errors.Is(err, pipeline.ErrNotCurrent):
				fmt.Fprintln(stderr, "that checkpoint was already answered; going on")
			case errors.Is(err, pipeline.ErrDecisionUnknown):
				fmt.Fprintln(stderr, "the store stopped answering, so your answer may or may not be recorded; if the checkpoint is asked again, answer it again")
			case err != nil:
				return err
			}
			break
		}
	}
}

// writeOutcome prints the report (stdout or a file) or says, in one line on
// stderr, why there is none. What came from the model or the web is cleaned
// of terminal escapes and bidi controls first (the report goes to a
// terminal or a file that will be shown in one).
func writeOutcome(r *pipeline.Run, outFile string, stdout, stderr io.Writer) error {
	switch {
	case r.Status == pipeline.StatusCancelled:
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot: run %s was cancelled by %s", r.ID, terminal.Clean(r.CancelledBy))}
	case r.Report == nil:
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot: run %s failed after %s of work: %s", r.ID, r.Active.Round(time.Second), terminal.Clean(r.Failure))}
	}
	fmt.Fprintf(stderr, "run %s %s after %s of work · %d tokens · $%.4f\n", r.ID, r.Status, r.Active.Round(time.Second),
		r.Spend.PromptTokens+r.Spend.CompletionTokens, r.Spend.CostUSD)
	report := terminal.CleanMarkdown(r.Report.Markdown)
	if outFile != "" {
		if err := os.WriteFile(outFile, []byte(report), 0o644); err != nil {
			return fmt.Errorf("write the report: %w", err)
		}
		fmt.Fprintf(stderr, "report written to %s\n", outFile)
	} else if _, err := io.WriteString(stdout, report); err != nil {
		return err
	}
	if r.Status == pipeline.StatusPartial {
		fmt.Fprintf(stderr, "note: this is a partial report: %s\n", terminal.Clean(r.FallbackReason))
	}
	return nil
}

func cmdRuns(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "prune" {
		return cmdPrune(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	limit := fs.Int("limit", 20, "how many runs to list")
	feedback := fs.Bool("feedback", false, "list what people said about the reports (👍 / 👎 and reasons) instead")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2}
	}
	a, err := openStore(ctx, getenv, stderr, "the embedded Redis starts empty, so there are no runs to list")
	if err != nil {
		return err
	}
	defer a.Close()
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{Limit: *limit})
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(stdout, "no runs yet")
		return nil
	}
	if *feedback {
		fmt.Fprintln(stdout, formatVerdicts(runs))
		return nil
	}
	fmt.Fprintln(stdout, formatRuns(runs, time.Now()))
	return nil
}

func originName(kind string) string {
	switch kind {
	case "slack":
		return "Slack"
	case "stream":
		return "a research stream"
	case "":
		return "elsewhere"
	}
	return kind
}

// stepOf says where a run stands: its step, or the checkpoint it waits at.
func stepOf(r *pipeline.Run) string {
	if inst := r.Current(); inst != nil {
		return "waits: " + inst.DefinitionID
	}
	return string(r.Step)
}

// formatRuns renders the run list as aligned columns, one line per run,
// cleaned for the terminal: a question is whatever someone typed in Slack.
func formatRuns(runs []*pipeline.Run, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %-9s %-10s %-21s %5s %9s  %s\n", "RUN", "FROM", "STATUS", "STEP", "AGE", "SPEND", "QUESTION")
	for _, r := range runs {
		q := strings.Join(strings.Fields(terminal.Clean(r.Question)), " ")
		if rs := []rune(q); len(rs) > 60 {
			q = string(rs[:59]) + "…"
		}
		fmt.Fprintf(&b, "%-12s %-9s %-10s %-21s %5s %9s  %s\n", r.ID, r.Origin.Kind, r.Status, stepOf(r), age(now.Sub(r.CreatedAt)), pipeline.FormatUSD(r.Spend.CostUSD), q)
	}
	return terminal.Clean(strings.TrimRight(b.String(), "\n"))
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// openStore assembles researchbot for a command that only reads or changes
// stored data. With no REDIS_URL it says, with emptyNote, why there is little to see.
func openStore(ctx context.Context, getenv func(string) string, stderr io.Writer, emptyNote string) (*app.App, error) {
	cfg, err := loadConfig(getenv, stderr)
	if err != nil {
		return nil, err
	}
	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		return nil, err
	}
	if a.Conn.Embedded {
		fmt.Fprintf(stderr, "note: REDIS_URL is not set; %s.\n", emptyNote)
	}
	return a, nil
}

func cmdEnv(stdout io.Writer) error {
	for _, v := range config.Variables() {
		def := v.Default
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(stdout, "%s\n    %s (default: %s)\n", v.Name, v.Meaning, def)
	}
	return nil
}
