package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/eval"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/app/roles"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/search/docsearch"
	"github.com/researchbot/researchbot/terminal"
)

// evalAbout is what `researchbot help eval` explains.
const evalAbout = `Runs each question of a small built-in set as an auto-mode run over a document
collection the program ships (PDFs and Markdown under public or free licences;
see eval/corpus/SOURCES.md), with the configured model and settings and no web
search, then grades each report in code:

  verified quotes      cited claims whose quote was found in the cited source
  citation precision   cited claims citing a document that holds the answer
  facts found          expected facts the report states

The same questions on the same evidence, so two models or settings compare.
--questions FILE and --corpus DIR replace the built-in questions (JSON, shaped
as eval/questions.json) and documents. Exit 0 when the runs ran, whatever
their scores; 1 when they could not run; 2 for a usage error.`

// evalQuestionTimeout bounds one question's run as seen from here; the run
// itself stops at RUN_MAX_WALL and RUN_MAX_COST_USD.
const evalQuestionTimeout = 45 * time.Minute

func cmdEval(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("eval")
	asJSON := fs.Bool("json", false, "print the scores as one JSON object")
	questionsFile := fs.String("questions", "", "a questions file (JSON, as eval/questions.json) instead of the built-in questions")
	corpusDir := fs.String("corpus", "", "a folder of documents instead of the built-in collection")
	depth := fs.String("depth", string(pipeline.DepthQuick), "depth of each run: quick, standard or comprehensive")
	rest, err := parseFlags(fs, "eval", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "eval", "takes no arguments (got %q)", rest[0])
	}
	if _, ok := pipeline.ParseDepth(*depth); !ok {
		return usageError(stderr, "eval", "invalid value %q for --depth: want quick, standard or comprehensive", *depth)
	}
	set := eval.Builtin()
	if *questionsFile != "" {
		b, err := os.ReadFile(*questionsFile)
		if err != nil {
			return usageError(stderr, "eval", "--questions %s: %v", *questionsFile, describeOpenError(err))
		}
		if set, err = eval.ParseQuestions(b); err != nil {
			return &exitError{code: 2, msg: fmt.Sprintf("researchbot eval: --questions %s:\n  - %s", *questionsFile, strings.ReplaceAll(err.Error(), "\n", "\n  - "))}
		}
	}
	if *corpusDir != "" {
		if st, err := os.Stat(*corpusDir); err != nil || !st.IsDir() {
			return usageError(stderr, "eval", "--corpus %s is not a folder", *corpusDir)
		}
	}
	cfg, err := loadConfig(getenv, config.Config.CheckLLM)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "researchbot-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	dir := *corpusDir
	if dir == "" {
		dir = filepath.Join(work, "corpus")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		if err := eval.WriteCorpus(dir); err != nil {
			return fmt.Errorf("write the built-in collection: %w", err)
		}
	}
	// The collection is the only evidence: its own index in the work
	// folder (never the operator's DOCS_INDEX_DIR), and no web search.
	cfg.DocsDirs, cfg.DocsIndexDir = []string{dir}, filepath.Join(work, "index")
	docs, err := indexCollection(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "collection: %d documents (%d pages) indexed; %d questions, depth %s, model %s\n", docs.Documents, docs.Pages, len(set.Questions), *depth, modelsOf(cfg))

	log := newLogger(config.Config{LogLevel: "warn", LogFormat: cfg.LogFormat}, stderr)
	queue := app.TerminalQueuePrefix + randomSuffix()
	// The process: the questions, one run at a time, beside the workers of
	// a private queue made for them.
	p, err := roles.New(ctx, roles.Config{
		Config: cfg, Roles: []roles.Role{roles.Foreground, roles.Workers},
		Queues: []string{queue}, NewQueue: true, Logger: log,
		Open: func(ctx context.Context, opts app.Options) (*app.App, error) {
			opts.OnlyDocuments = true
			return openChecked(ctx, cfg, dependencies{llm: true}, opts)
		},
		Job: roles.Job{Run: func(ctx context.Context, a *app.App) error {
			return runEvalSet(ctx, a, set, *depth, queue, cfg, *asJSON, stdout, stderr)
		}},
	})
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Run(ctx)
}

// runEvalSet runs the questions of set one by one on queue, then prints
// their scores (a table, or JSON).
func runEvalSet(ctx context.Context, a *app.App, set eval.Set, depth, queue string, cfg config.Config, asJSON bool, stdout, stderr io.Writer) error {
	var scores []eval.Score
	for i, q := range set.Questions {
		fmt.Fprintf(stderr, "[%d/%d] %s: %s\n", i+1, len(set.Questions), q.ID, terminal.Clean(q.Question))
		s, err := evalQuestion(ctx, a, q, pipeline.Depth(depth), queue)
		if ctx.Err() != nil {
			return &exitError{code: 130, msg: "researchbot eval: stopped"}
		}
		if err != nil {
			s.Error = err.Error()
		}
		claims := "claims"
		if s.Claims == 1 {
			claims = "claim"
		}
		fmt.Fprintf(stderr, "      %s · %d cited %s · $%.4f\n", s.Status, s.Claims, claims, s.CostUSD)
		if s.Error != "" {
			fmt.Fprintf(stderr, "      %s\n", s.Error)
		}
		scores = append(scores, s)
	}
	result := eval.Summarize(modelsOf(cfg), depth, scores)
	if asJSON {
		return eval.WriteJSON(stdout, result)
	}
	return eval.WriteTable(terminal.CleanWriter(stdout), result)
}

// indexCollection indexes the collection of cfg before any run searches
// it, and returns its status.
func indexCollection(ctx context.Context, cfg config.Config) (docsearch.Status, error) {
	c, err := docsearch.Open(docsearch.Config{Dirs: cfg.DocsDirs, IndexDir: cfg.DocsIndexDir})
	if err != nil {
		return docsearch.Status{}, fmt.Errorf("index the collection: %w", err)
	}
	defer c.Close()
	rep, err := c.Update(ctx)
	if err == nil && len(rep.FolderErrors) > 0 {
		err = errors.Join(rep.FolderErrors...)
	}
	if err != nil {
		return docsearch.Status{}, fmt.Errorf("index the collection: %w", err)
	}
	st := c.Status()
	if st.Documents == 0 {
		return st, &exitError{code: 1, msg: fmt.Sprintf("researchbot eval: the collection in %s holds no document researchbot reads (%s)", cfg.DocsDirs[0], "PDF, Word, Markdown, CSV or plain text")}
	}
	return st, nil
}

// evalQuestion runs one question in auto mode and grades its report. A run
// that stops at a checkpoint, or does not finish in time, is graded as it
// is (no report) with the reason.
func evalQuestion(ctx context.Context, a *app.App, q eval.Question, depth pipeline.Depth, queue string) (eval.Score, error) {
	start := time.Now()
	r, err := a.Engine.Start(ctx, pipeline.Request{
		Question: q.Question, Mode: checkpoints.ModeAuto, Depth: depth, RequestedBy: "eval",
		Origin: pipeline.Origin{Kind: "terminal", Queue: queue},
	})
	if err != nil {
		return eval.Grade(q, "", "failed", nil), fmt.Errorf("could not start: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, evalQuestionTimeout)
	defer cancel()
	last := r
	runs := a.Store.Watch(ctx, r.ID, 0)
	for got := range runs {
		last = got
		if got.Status.Final() || got.Status == pipeline.StatusWaiting {
			break
		}
	}
	cancel()
	for range runs { // until the watch has stopped: it ends with a Redis call
	}
	s := eval.Grade(q, last.ID, last.Status, last.Report)
	s.CostUSD, s.Seconds = last.Spend.CostUSD, time.Since(start).Seconds()
	switch {
	case last.Status == pipeline.StatusWaiting:
		return s, fmt.Errorf("the run stopped at a checkpoint (%s)", last.Waiting)
	case !last.Status.Final():
		return s, fmt.Errorf("the run did not finish within %s", evalQuestionTimeout)
	case last.Report == nil:
		return s, fmt.Errorf("no report: %s", terminal.Clean(last.Failure))
	}
	return s, nil
}

// modelsOf names the models the runs use: LLM_MODEL, and each role's own.
func modelsOf(cfg config.Config) string {
	var roles []string
	for r, m := range cfg.RoleModels {
		if m != cfg.Model {
			roles = append(roles, r+"="+m)
		}
	}
	sort.Strings(roles)
	return strings.Join(slices.Concat([]string{cfg.Model}, roles), ", ")
}
