package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/app/roles"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// loadConfig reads the configuration and turns every problem into one
// exit message, a line each.
func loadConfig(getenv func(string) string, checks ...func(config.Config) error) (config.Config, error) {
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
	if len(problems) == 0 {
		return cfg, nil
	}
	msg := "researchbot: the configuration has problems:"
	for _, line := range strings.Split(errors.Join(problems...).Error(), "\n") {
		msg += "\n  - " + line
	}
	return cfg, &exitError{code: 2, msg: msg + "\nSee 'researchbot env' or the README for every variable."}
}

func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("run")
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
	var domains pipeline.DomainRules
	fs.Func("only-domain", "read sources only from this domain and its subdomains (repeatable, or a comma list)", appendDomains(&domains.Only))
	fs.Func("never-domain", "never read sources from this domain or its subdomains (repeatable, or a comma list)", appendDomains(&domains.Never))
	var filePaths []string
	fs.Func("file", "a document to read first and cite by name: PDF, Word (.docx), Markdown, CSV, HTML or plain text (repeatable)", func(v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("want the path of a file")
		}
		filePaths = append(filePaths, v)
		return nil
	})
	maxIter := fs.Int("max-iterations", 0, "revision and re-plan limit (default RUN_MAX_ITERATIONS)")
	resume := fs.String("resume", "", "continue the run with this id")
	outFile := fs.String("o", "", "write the report to this file instead of stdout")
	words, err := parseFlags(fs, "run", args, true, stdout, stderr)
	if err != nil {
		return err
	}
	question := strings.TrimSpace(strings.Join(words, " "))
	if *resume == "" && question == "" {
		return usageError(stderr, "run", "give a question, or --resume RUN_ID")
	}
	queue := app.TerminalQueuePrefix + randomSuffix()
	req := pipeline.Request{
		Question: question, Mode: *mode, Depth: pipeline.Depth(*depth), RequestedBy: "terminal", ReviewSources: *reviewSources,
		Origin: pipeline.Origin{Kind: "terminal", Queue: queue},
		Limits: limitsFromFlags(maxCost, *maxIter), Domains: domains,
		// The terminal's report is read by the person at it alone.
		Audience: pipeline.PersonAudience("", "terminal"),
	}
	if *resume != "" && len(filePaths) > 0 {
		return usageError(stderr, "run", "--file gives a new run its files; a resumed run keeps those it was given")
	}
	if req.Files, err = readFiles(ctx, filePaths); err != nil {
		return err
	}
	if *resume == "" {
		if err := pipeline.ValidateRequest(req); err != nil {
			return &exitError{code: 2, msg: "researchbot: " + err.Error()}
		}
	}
	cfg, err := loadConfig(getenv, config.Config.CheckLLM)
	if err != nil {
		return err
	}
	// Everything the run shows goes through the screen: on a terminal the
	// progress is one line redrawn in place, and the rest prints past it.
	// Each output is wrapped and coloured as its own terminal allows: the
	// report may go to a file while the checkpoints show on a terminal.
	style, reportStyle := terminal.StyleFor(stderr, getenv), terminal.StyleFor(stdout, getenv)
	screen := terminal.NewScreen(stderr, terminal.IsTerminal(stderr))
	defer screen.Done()
	stderr = screen
	log := newLogger(cfg, stderr)
	if cfg.LogLevel == "info" {
		log = newLogger(config.Config{LogLevel: "warn", LogFormat: cfg.LogFormat}, stderr)
	}
	presenter := terminal.New(stderr)
	spans, stopTracing, err := startTracing(ctx, getenv, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	job := &terminalRun{req: req, resume: *resume, outFile: *outFile, stdin: stdin, stdout: stdout, stderr: stderr,
		getenv: getenv, style: style, reportStyle: reportStyle, log: log}
	// The process: this command's job (start or resume the run, follow it,
	// ask its checkpoints) beside the workers of the run's private queue.
	// A person who presses Ctrl-C wants the prompt back: the step in flight
	// is handed back at once (roles.ForegroundShutdownTimeout; it is redone
	// on --resume), and only then is the run marked interrupted.
	p, err := roles.New(ctx, roles.Config{
		Config: cfg, Roles: []roles.Role{roles.Foreground, roles.Workers},
		Queues:     []string{queue},
		NewQueue:   *resume == "", // a resumed run's queue may hold its timers
		Presenters: map[string]pipeline.Presenter{"terminal": presenter}, Logger: log, Tracing: spans,
		Open: func(ctx context.Context, opts app.Options) (*app.App, error) {
			a, err := openChecked(ctx, cfg, dependencies{llm: true}, opts)
			if err != nil {
				return nil, err
			}
			if a.Conn.Embedded {
				fmt.Fprintln(stderr, "note: REDIS_URL is not set, so researchbot uses an in-process Redis: this run's state will not survive the process.")
			}
			if len(a.Backends) > 0 {
				fmt.Fprintf(stderr, "search backends: %s\n", strings.Join(a.Backends, ", "))
			}
			return a, nil
		},
		Job: roles.Job{Prepare: job.prepare, Run: job.run, AfterWorkers: job.afterWorkers},
	})
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Run(ctx)
}

// appendDomains is a flag function adding a comma list of domains to
// dst; the run's validation judges each one.
func appendDomains(dst *[]string) func(string) error {
	return func(v string) error {
		for d := range strings.SplitSeq(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				*dst = append(*dst, d)
			}
		}
		return nil
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
// With steer set, a line typed while no checkpoint is asked steers the run.
func follow(ctx context.Context, eng *pipeline.Engine, runs <-chan *pipeline.Run, f *terminal.Follower, pr *terminal.Prompter, steer terminal.Steerer, runID string, durable bool, outFile string, report terminal.Style, stdout, stderr io.Writer) error {
	resumeHint := func(what string) string {
		if !durable {
			return fmt.Sprintf("\n%s. The run's state was in the in-process Redis and is gone; set REDIS_URL to make runs resumable.", what)
		}
		return fmt.Sprintf("\n%s. Everything so far is saved; continue with:\n  researchbot run --resume %s", what, runID)
	}
	interrupted := func() error { return &exitError{code: 130, msg: resumeHint("stopped")} }
	var next *pipeline.Run // a state seen while a prompt was up
	for {
		r := next
		next = nil
		if r == nil && steer != nil {
			got, ok, err := pr.AwaitWorking(ctx, runs, steer, runID)
			if err != nil || !ok {
				return interrupted()
			}
			r = got
		}
		if r == nil {
			select {
			case <-ctx.Done():
				return interrupted()
			case got, ok := <-runs:
				if !ok {
					return interrupted()
				}
				r = got
			}
		}
		inst := f.Observe(r)
		if r.Status.Final() {
			return writeOutcome(r, outFile, report, stdout, stderr)
		}
		if inst == nil {
			continue
		}
		var fieldErrs []checkpoints.FieldError
		for {
			newer, d, err := askWatching(ctx, runs, pr, *inst, fieldErrs)
			if ctx.Err() != nil || errors.Is(err, errWatchEnded) {
				return interrupted()
			}
			if newer != nil {
				// Answered elsewhere, or timed out and gone on: no stale prompt.
				switch cur := newer.Current(); {
				case newer.Instance(inst.ID) == nil:
					// The store went back to before this checkpoint (ids are
					// never removed from a run): the Follower warns when an
					// earlier decision is asked again.
					fmt.Fprintf(stderr, "\n(%s was lost with the run's storage, which went back in time; going back)\n", terminal.Clean(inst.Label))
				case cur == nil || cur.ID != inst.ID || cur.Attempt == inst.Attempt: // not a reminder of it
					fmt.Fprintf(stderr, "\n(%s was settled without you; going on)\n", terminal.Clean(inst.Label))
				}
				next = newer
				break
			}
			if errors.Is(err, terminal.ErrNoInput) {
				return &exitError{code: 3, msg: resumeHint(fmt.Sprintf("standard input ended, and the run waits for an answer at %q: "+
					"a guided run asks questions as it goes; run it in a terminal, or use --mode auto for a run that asks none", inst.Label))}
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
			case errors.Is(err, pipeline.ErrCheckpointLost):
				fmt.Fprintln(stderr, "that checkpoint was lost when the run's storage was restored, so your answer was not recorded; the run asks again for an earlier decision")
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

// errWatchEnded reports that the run's states stopped coming (the watch
// ended) while a prompt was up.
var errWatchEnded = errors.New("the run is no longer watched")

// askWatching asks the person about inst while it keeps watching the run.
// When the run moves on without the answer (the checkpoint timed out and
// the run went on, or someone answered it in Slack), the prompt is
// withdrawn at once and the newer state returned instead of a decision.
func askWatching(ctx context.Context, runs <-chan *pipeline.Run, pr *terminal.Prompter, inst checkpoints.Instance, errs []checkpoints.FieldError) (*pipeline.Run, checkpoints.Decision, error) {
	askCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		d   checkpoints.Decision
		err error
	}
	answered := make(chan answer, 1)
	go func() { // owner: this call; it waits for the answer before returning
		d, err := pr.Ask(askCtx, inst, errs)
		answered <- answer{d, err}
	}()
	for {
		select {
		case a := <-answered:
			return nil, a.d, a.err
		case r, ok := <-runs:
			if !ok {
				cancel()
				<-answered
				return nil, checkpoints.Decision{}, errWatchEnded
			}
			if stillOffered(r, inst) {
				continue
			}
			cancel()
			<-answered
			return r, checkpoints.Decision{}, nil
		}
	}
}

// stillOffered reports whether r still waits for an answer to this offer
// of inst.
func stillOffered(r *pipeline.Run, inst checkpoints.Instance) bool {
	cur := r.Current()
	return !r.Status.Final() && cur != nil && cur.ID == inst.ID && cur.Attempt == inst.Attempt &&
		(cur.Open() || cur.State == checkpoints.StateTimedOut)
}

// writeOutcome prints the report (stdout or a file) or says, in one line on
// stderr, why there is none. What came from the model or the web is cleaned
// of terminal escapes and bidi controls first (the report goes to a
// terminal or a file that will be shown in one); on stdout it is laid out
// in style (wrapped and coloured when stdout is a terminal).
func writeOutcome(r *pipeline.Run, outFile string, style terminal.Style, stdout, stderr io.Writer) error {
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
	} else if _, err := io.WriteString(stdout, style.Report(report)); err != nil {
		return err
	}
	if r.Status == pipeline.StatusPartial {
		fmt.Fprintf(stderr, "note: this is a partial report: %s\n", terminal.Clean(r.FallbackReason))
		if len(r.Pages) == 0 {
			return &exitError{code: 1, msg: noSourcesMessage(r)}
		}
	}
	return nil
}

// noSourcesMessage says why a run read nothing: the distinct search and
// fetch errors it recorded, and what to check.
func noSourcesMessage(r *pipeline.Run) string {
	var causes []string
	for _, e := range r.Errors {
		m := e.Message
		if strings.HasPrefix(m, `query "`) { // the same cause for every query: say it once
			if _, after, ok := strings.Cut(m, `": `); ok {
				m = after
			}
		}
		if (e.Kind == "search" || e.Kind == "fetch") && !slices.Contains(causes, m) && len(causes) < 3 {
			causes = append(causes, m)
		}
	}
	msg := fmt.Sprintf("researchbot: run %s read no sources, so its report says nothing it could check", r.ID)
	if len(causes) == 0 {
		msg += ": the searches found nothing"
	} else {
		msg += ": " + terminal.Clean(strings.Join(causes, "; "))
	}
	return msg + ". Check the network, or configure a search backend you can reach (SEARXNG_URL, BRAVE_API_KEY, TAVILY_API_KEY; see 'researchbot env')."
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

// openStore assembles researchbot for a command that only reads or changes
// stored data. With no REDIS_URL it says, with emptyNote, why there is little to see.
func openStore(ctx context.Context, getenv func(string) string, stderr io.Writer, emptyNote string) (*app.App, error) {
	cfg, err := loadConfig(getenv)
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
