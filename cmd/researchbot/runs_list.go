package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// cmdRuns lists runs (`researchbot runs`), what people said about their
// reports (--feedback), or prunes them (`runs prune`); --json writes one
// JSON object a line for scripts.
func cmdRuns(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "prune" {
		return cmdPrune(ctx, args[1:], getenv, stdout, stderr)
	}
	fs := newFlags("runs")
	limit := fs.Int("limit", 20, "how many runs to list")
	feedback := fs.Bool("feedback", false, "list what people said about the reports (👍 / 👎 and reasons) instead")
	asJSON := fs.Bool("json", false, "one JSON object a line: a run (or, with --feedback, a verdict); fields in docs/terminal.md")
	rest, err := parseFlags(fs, "runs", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError(stderr, "runs", "unexpected argument %q", rest[0])
	}
	if *limit < 1 {
		return usageError(stderr, "runs", "--limit must be at least 1 (got %d)", *limit)
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
	switch {
	case *asJSON && *feedback:
		return writeJSONLines(stdout, verdictsJSON(runs))
	case *asJSON:
		return writeJSONLines(stdout, runsJSON(runs))
	case len(runs) == 0:
		fmt.Fprintln(stdout, "no runs yet")
	case *feedback:
		fmt.Fprintln(stdout, formatVerdicts(runs))
	default:
		fmt.Fprintln(stdout, formatRuns(runs, time.Now(), colorOn(stdout, getenv)))
	}
	return nil
}

// runJSON is one line of `researchbot runs --json`. Text that came from
// people is cleaned as in the table (no control, bidi or zero-width
// characters), not cut.
type runJSON struct {
	ID               string    `json:"id"`
	From             string    `json:"from"` // where it was started: terminal, slack, stream
	Status           string    `json:"status"`
	Step             string    `json:"step"`
	WaitingAt        string    `json:"waiting_at,omitempty"` // the checkpoint definition it waits at
	CreatedAt        time.Time `json:"created_at"`
	SpendUSD         float64   `json:"spend_usd"`
	FollowUps        int       `json:"follow_ups"`
	FollowUpSpendUSD float64   `json:"follow_up_spend_usd"`
	Parent           string    `json:"parent,omitempty"` // the run whose follow-up question this one researches
	Question         string    `json:"question"`
}

func runsJSON(runs []*pipeline.Run) []runJSON {
	out := make([]runJSON, 0, len(runs))
	for _, r := range runs {
		j := runJSON{
			ID: r.ID, From: r.Origin.Kind, Status: string(r.ShownStatus()), Step: string(r.Step),
			CreatedAt: r.CreatedAt.UTC(), SpendUSD: r.Spend.CostUSD,
			FollowUps: len(r.FollowUps), FollowUpSpendUSD: r.FollowUpSpend(), Parent: r.Parent,
			Question: terminal.Clean(r.Question),
		}
		if inst := r.Current(); inst != nil {
			j.WaitingAt = inst.DefinitionID
		}
		out = append(out, j)
	}
	return out
}

// verdictJSON is one line of `researchbot runs --feedback --json`: one
// person's verdict on one run's report, or on one of its follow-up answers.
type verdictJSON struct {
	RunID    string    `json:"run_id"`
	Question string    `json:"question"`
	On       string    `json:"on,omitempty"` // the follow-up answer judged
	By       string    `json:"by"`           // the Slack user id
	Verdict  string    `json:"verdict"`      // useful or not_useful
	Reason   string    `json:"reason,omitempty"`
	At       time.Time `json:"at"`
}

func verdictsJSON(runs []*pipeline.Run) []verdictJSON {
	out := []verdictJSON{}
	for _, r := range runs {
		for _, v := range r.Verdicts {
			verdict := "useful"
			if !v.Useful {
				verdict = "not_useful"
			}
			out = append(out, verdictJSON{
				RunID: r.ID, Question: terminal.Clean(r.Question), On: terminal.Clean(v.On), By: terminal.Clean(v.By),
				Verdict: verdict, Reason: terminal.Clean(v.Reason), At: v.At.UTC(),
			})
		}
	}
	return out
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
// With color the header is bold and each status coloured.
func formatRuns(runs []*pipeline.Run, now time.Time, color bool) string {
	var b strings.Builder
	tw := newTable(&b)
	header := []string{"RUN", "FROM", "STATUS", "STEP", "AGE", "SPEND", "QUESTION"}
	for i, h := range header {
		header[i] = paint(color, sgrBold, h)
	}
	fmt.Fprint(tw, strings.Join(header, "\t")+"\n")
	for _, r := range runs {
		q := oneLineCut(r.Question, 60) + followUpNote(r)
		cells := []string{r.ID, r.Origin.Kind, string(r.ShownStatus()), stepOf(r), age(now.Sub(r.CreatedAt)), pipeline.FormatUSD(r.Spend.CostUSD), q}
		for i, c := range cells {
			cells[i] = terminal.Clean(c)
		}
		// Every cell of a column gets the same invisible bytes: see paint.
		cells[0] = paint(color, sgrDefault, cells[0])
		cells[1] = paint(color, sgrDefault, cells[1])
		cells[2] = paint(color, statusColor(cells[2]), cells[2])
		cells[3] = paint(color, sgrDefault, cells[3])
		cells[4] = paint(color, sgrDefault, cells[4])
		cells[5] = paint(color, sgrDefault, cells[5])
		fmt.Fprint(tw, strings.Join(cells, "\t")+"\n")
	}
	tw.Flush()
	return strings.TrimRight(b.String(), "\n")
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
