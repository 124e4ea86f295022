package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/terminal"
)

// sourcesAbout is what `researchbot help sources` explains.
const sourcesAbout = `Lists every search backend the configuration turns on (web search services,
MCP servers from MCP_SERVERS, the document collection of DOCS_DIR) and checks
each at once: a web service must answer a one-result test search; an MCP server
must connect, list its tools and offer the configured search and read tools, not
marked as tools that write; the document collection must have been indexed (its
line gives the document count and the index's age). The Slack workspace search
(SLACK_WORKSPACE_SEARCH) has a row with its state (on for every channel, on for
some, off) but no check: it searches with the token of the person who asked,
which Slack sends only with their message. Exits 0 when every check passes, 1
when one fails. --json writes one JSON object a line (fields in docs/terminal.md).`

// Source states of `researchbot sources --json` (the table says "FAILED",
// and gives the workspace search's state in words).
const (
	sourceOK         = "ok"
	sourceFailed     = "failed"
	sourceNotChecked = "not_checked"
	sourceOff        = "off"
)

// workspaceNotChecked is why the workspace search's row has no check result.
const workspaceNotChecked = "not checked: it searches with the token of the person who asked, which Slack sends only with their message"

// sourceJSON is one line of `researchbot sources --json`: one backend.
type sourceJSON struct {
	Type     string   `json:"type"`    // web, mcp, documents or slack
	Backend  string   `json:"backend"` // its name, as errors and metrics give it
	Serves   []string `json:"serves"`  // the query kinds it serves
	Where    string   `json:"where,omitempty"`
	State    string   `json:"state"`              // ok, failed, not_checked, off
	Channels []string `json:"channels,omitempty"` // the workspace search's only channels
	Detail   string   `json:"detail"`             // what the check found, why it failed, or why there is none
}

// cmdSources checks every configured search backend and prints a table, or
// with --json one JSON object a line.
func cmdSources(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("sources")
	timeout := fs.Duration("timeout", 20*time.Second, "how long each check may take")
	asJSON := fs.Bool("json", false, "one JSON object a line, a backend each; fields in docs/terminal.md")
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
	rows, failed := sourceRows(checks)
	rows = append(rows, workspaceSearchRow(cfg))
	if *asJSON {
		err = writeJSONLines(stdout, rows)
	} else {
		err = formatSources(stdout, rows)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("%d of %d search backends failed their check", failed, len(checks))}
	}
	return nil
}

// sourceRows turns the checks into rows and counts those that failed. Text
// from elsewhere (an MCP server's error, a path) is cleaned for the
// terminal, as in every listing.
func sourceRows(checks []app.SourceCheck) (rows []sourceJSON, failed int) {
	rows = make([]sourceJSON, 0, len(checks)+1)
	for _, c := range checks {
		row := sourceJSON{Type: c.Type, Backend: c.Name, Serves: c.Kinds, Where: terminal.Clean(c.Where), State: sourceOK, Detail: terminal.Clean(c.Detail)}
		if c.Err != nil {
			row.State, row.Detail = sourceFailed, terminal.Clean(c.Err.Error())
			failed++
		}
		if row.Serves == nil {
			row.Serves = []string{}
		}
		rows = append(rows, row)
	}
	return rows, failed
}

// workspaceSearchRow is the Slack workspace search's row: its state, and
// no check, since only a person's token (sent with their message) can
// search. Its kinds are those it answers (a workspace holds no papers).
func workspaceSearchRow(cfg config.Config) sourceJSON {
	row := sourceJSON{Type: "slack", Backend: "slack-workspace", Serves: []string{"web", "news"}, State: sourceOff}
	switch {
	case !cfg.WorkspaceSearch:
		row.Detail = "SLACK_WORKSPACE_SEARCH is not true"
	case cfg.SlackBotToken == "":
		row.Detail = "SLACK_WORKSPACE_SEARCH is true but SLACK_BOT_TOKEN is not set"
	default:
		row.State, row.Detail = sourceNotChecked, workspaceNotChecked
		if len(cfg.WorkspaceSearchChannels) > 0 && !slices.Contains(cfg.WorkspaceSearchChannels, "*") {
			row.Channels = cfg.WorkspaceSearchChannels
		}
	}
	return row
}

// formatSources writes the rows as a table, a row a line.
func formatSources(w io.Writer, rows []sourceJSON) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "TYPE\tBACKEND\tSERVES\tSTATE\tDETAIL")
	for _, r := range rows {
		detail := r.Detail
		if r.Where != "" {
			detail = r.Where + "; " + detail
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Type, r.Backend, strings.Join(r.Serves, ","), stateWords(r), oneLine(detail))
	}
	return tw.Flush()
}

// stateWords is a row's STATE cell.
func stateWords(r sourceJSON) string {
	switch {
	case r.State == sourceFailed:
		return "FAILED"
	case r.Type == "slack" && r.State == sourceNotChecked && len(r.Channels) > 0:
		return "on for " + strings.Join(r.Channels, ",")
	case r.Type == "slack" && r.State == sourceNotChecked:
		return "on for every channel"
	}
	return r.State
}

// oneLine keeps a table cell on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
