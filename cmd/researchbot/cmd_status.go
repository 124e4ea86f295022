package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// cmdStatus shows one run: where it stands, what it asked and spent, as
// lines for a person or (--json) one JSON object, the same as a line of
// `runs --json`.
func cmdStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("status")
	asJSON := fs.Bool("json", false, "one JSON object, with the fields of 'researchbot runs --json' (docs/terminal.md)")
	words, err := parseFlags(fs, "status", args, true, stdout, stderr)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return usageError(stderr, "status", "needs one run id (got %d arguments): researchbot status RUN_ID", len(words))
	}
	a, err := openStore(ctx, getenv, stderr, "the embedded Redis starts empty, so there is no run to show")
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.Engine.Load(ctx, words[0])
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot status: no run %q (researchbot runs lists them)", terminal.Clean(words[0]))}
	case err != nil:
		return err
	}
	j := runsJSON([]*pipeline.Run{r})
	if *asJSON {
		return writeJSONLines(stdout, j)
	}
	fmt.Fprintln(stdout, formatStatus(j[0], time.Now(), colorOn(stdout, getenv)))
	return nil
}

// formatStatus renders one run for a person, as aligned "name  value"
// lines; with color its status is coloured as in the runs table.
func formatStatus(r runJSON, now time.Time, color bool) string {
	var b strings.Builder
	tw := newTable(&b)
	status := paint(color, statusColor(r.Status), r.Status)
	if r.WaitingAt != "" {
		status += " at " + r.WaitingAt
	}
	fmt.Fprintf(tw, "run\t%s (from %s)\n", r.ID, r.From)
	fmt.Fprintf(tw, "status\t%s\n", status)
	fmt.Fprintf(tw, "step\t%s\n", r.Step)
	fmt.Fprintf(tw, "started\t%s (%s ago)\n", r.CreatedAt.Format(time.RFC3339), age(now.Sub(r.CreatedAt)))
	fmt.Fprintf(tw, "spend\t%s\n", pipeline.FormatUSD(r.SpendUSD))
	if r.FollowUps > 0 {
		fmt.Fprintf(tw, "follow-ups\t%d, %s\n", r.FollowUps, pipeline.FormatUSD(r.FollowUpSpendUSD))
	}
	if r.Parent != "" {
		fmt.Fprintf(tw, "follow-up of\t%s\n", r.Parent)
	}
	fmt.Fprintf(tw, "question\t%s\n", oneLineCut(r.Question, 200))
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}
