package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/search/docsearch"
	"github.com/researchbot/researchbot/terminal"
)

// docsSubcommands are the words `researchbot docs` takes.
var docsSubcommands = []string{"index", "status", "search"}

// docsAbout is what `researchbot help docs` explains.
const docsAbout = `The document collection is the folders of DOCS_DIR, indexed for full-text search
in DOCS_INDEX_DIR and searched by runs beside the web. serve, worker and run keep
the index up to date every DOCS_CHECK_INTERVAL; one process at a time uses it, so
'docs index' and 'docs search' need serve and worker stopped (or another
DOCS_INDEX_DIR), while 'docs status' reads what the last check left.

  researchbot docs index                 read added and changed files, drop removed ones
  researchbot docs status [--json]       documents, skipped files and why, index age
  researchbot docs search [--limit N] [--json] "<query>"   what a run's search finds`

// cmdDocs runs `researchbot docs SUBCOMMAND`.
func cmdDocs(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	stdout = terminal.CleanWriter(stdout)
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "index":
		return cmdDocsIndex(ctx, args[1:], getenv, stdout, stderr)
	case "status":
		return cmdDocsStatus(args[1:], getenv, stdout, stderr)
	case "search":
		return cmdDocsSearch(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help", "-help":
		c, _ := lookup("docs")
		commandUsage(stdout, c, nil)
		return helped
	case "":
		return usageError(stderr, "docs", "name what to do: %s", strings.Join(docsSubcommands, ", "))
	}
	return unknownCommand(stderr, "researchbot docs", sub, docsSubcommands)
}

// docsConfig loads the configuration and requires a collection: exit 2
// without DOCS_DIR.
func docsConfig(getenv func(string) string) (config.Config, error) {
	return loadConfig(getenv, func(c config.Config) error {
		if len(c.DocsDirs) == 0 {
			return errors.New("DOCS_DIR is not set: name the folders of the document collection, separated by ':'")
		}
		return nil
	})
}

// openCollection opens the index for this command; another process
// holding it is a plain error saying which.
func openCollection(cfg config.Config) (*docsearch.Collection, error) {
	c, err := docsearch.Open(docsearch.Config{Dirs: cfg.DocsDirs, IndexDir: cfg.DocsIndexDir})
	if errors.Is(err, docsearch.ErrInUse) {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("researchbot docs: the index in %s is in use by another process (a serve or worker keeps it up to date every %s); stop it, or set DOCS_INDEX_DIR to another folder", cfg.DocsIndexDir, cfg.DocsCheckInterval)}
	}
	return c, err
}

func cmdDocsIndex(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("docs index")
	rest, err := parseFlags(fs, "docs index", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "docs index", "takes no arguments (got %q)", rest[0])
	}
	cfg, err := docsConfig(getenv)
	if err != nil {
		return err
	}
	c, err := openCollection(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	rep, err := c.Update(ctx)
	if err != nil {
		return err
	}
	st := c.Status()
	fmt.Fprintf(stdout, "Indexed %d documents (%d pages) in %s: %d added, %d changed, %d removed, %d unchanged; %d skipped in all (see 'researchbot docs status').\n",
		st.Documents, st.Pages, rep.Took.Round(time.Millisecond), rep.Added, rep.Changed, rep.Removed, rep.Unchanged, len(st.Skipped))
	for _, e := range rep.FolderErrors {
		fmt.Fprintf(stderr, "researchbot docs index: %v (its documents were kept as they were)\n", e)
	}
	if len(rep.FolderErrors) > 0 {
		return &exitError{code: 1}
	}
	return nil
}

func cmdDocsStatus(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("docs status")
	asJSON := fs.Bool("json", false, "print the status as one JSON object")
	rest, err := parseFlags(fs, "docs status", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "docs status", "takes no arguments (got %q)", rest[0])
	}
	cfg, err := docsConfig(getenv)
	if err != nil {
		return err
	}
	st, err := docsearch.ReadStatus(cfg.DocsIndexDir)
	if errors.Is(err, docsearch.ErrNeverIndexed) {
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot docs status: the documents in %s have not been indexed yet; run 'researchbot docs index', or start serve or worker, which index them", strings.Join(cfg.DocsDirs, ":"))}
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(st)
	}
	now := time.Now()
	changed := "never"
	if !st.Changed.IsZero() {
		changed = app.Age(now, st.Changed) + " ago"
	}
	fmt.Fprintf(stdout, "Index: %s (%s), checked %s ago, last change %s\n", st.IndexDir, humanBytes(st.IndexBytes), app.Age(now, st.Checked), changed)
	fmt.Fprintf(stdout, "Documents: %d (%d pages), skipped: %d\n\n", st.Documents, st.Pages, len(st.Skipped))
	tw := newTable(stdout)
	fmt.Fprintln(tw, "FOLDER\tDOCUMENTS\tPATH")
	for _, r := range st.Roots {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Name, r.Documents, r.Dir)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.Skipped) > 0 {
		fmt.Fprintln(stdout, "\nSkipped (not searched until they change):")
		tw = newTable(stdout)
		for _, s := range st.Skipped {
			fmt.Fprintf(tw, "  %s\t%s\n", s.Path, oneLine(s.Reason))
		}
		return tw.Flush()
	}
	return nil
}

func cmdDocsSearch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("docs search")
	limit := fs.Int("limit", 10, "how many documents to list")
	asJSON := fs.Bool("json", false, "one JSON object a line: path, page, score, address, snippet")
	rest, err := parseFlags(fs, "docs search", args, true, stdout, stderr)
	if err != nil {
		return err
	}
	q := strings.TrimSpace(strings.Join(rest, " "))
	if q == "" {
		return usageError(stderr, "docs search", `give the words to search for: researchbot docs search "<query>"`)
	}
	if *limit < 1 {
		return usageError(stderr, "docs search", "--limit must be at least 1 (got %d)", *limit)
	}
	cfg, err := docsConfig(getenv)
	if err != nil {
		return err
	}
	c, err := openCollection(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	hits, err := c.Search(ctx, q, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		type line struct {
			Folder  string  `json:"folder"`
			Path    string  `json:"path"`
			Page    int     `json:"page,omitempty"`
			Score   float64 `json:"score"`
			URL     string  `json:"url"`
			Snippet string  `json:"snippet"`
		}
		lines := make([]line, len(hits))
		for i, h := range hits {
			lines[i] = line{Folder: h.Root, Path: h.Rel, Page: h.Page, Score: h.Score, URL: h.URL(), Snippet: h.Snippet}
		}
		return writeJSONLines(stdout, lines)
	}
	if len(hits) == 0 {
		fmt.Fprintf(stdout, "No document matches %q.\n", q)
		return nil
	}
	for i, h := range hits {
		fmt.Fprintf(stdout, "[%d] %s — internal documents (%s), score %.2f\n    %s\n", i+1, docsearch.Cite(h.Rel, h.Page), h.Root, h.Score, h.Snippet)
	}
	return nil
}

// humanBytes is n in KiB or MiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
