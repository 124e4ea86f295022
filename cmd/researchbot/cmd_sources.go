package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/researchbot/researchbot/internal/app"
)

// sourcesAbout is what `researchbot help sources` explains.
const sourcesAbout = `Lists every search backend the configuration turns on (web search services,
MCP servers from MCP_SERVERS, the document collection of DOCS_DIR) and checks
each at once: a web service must answer a one-result test search; an MCP server
must connect, list its tools and offer the configured search and read tools, not
marked as tools that write; the document collection must have been indexed (its
line gives the document count and the index's age). Exits 0 when every check
passes, 1 when one fails.`

// cmdSources checks every configured search backend and prints a table.
func cmdSources(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("sources")
	timeout := fs.Duration("timeout", 20*time.Second, "how long each check may take")
	rest, err := parseFlags(fs, "sources", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "sources", "takes no arguments (got %q)", rest[0])
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	checks := app.CheckSources(ctx, cfg, nil, *timeout)
	failed := 0
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tBACKEND\tSERVES\tSTATE\tDETAIL")
	for _, c := range checks {
		state, detail := "ok", c.Detail
		if c.Err != nil {
			state, detail = "FAILED", c.Err.Error()
			failed++
		}
		if c.Where != "" {
			detail = c.Where + "; " + detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Type, c.Name, strings.Join(c.Kinds, ","), state, oneLine(detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d of %d search backends failed their check", failed, len(checks))}
	}
	return nil
}

// oneLine keeps a table cell on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
