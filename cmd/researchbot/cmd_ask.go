package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// cmdAsk answers a follow-up question about a finished run from the pages
// its report cites: `researchbot ask RUN_ID "question"`. The answer, its
// checked citations and its cost are saved with the run, as in Slack.
func cmdAsk(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	words, err := parseFlags(newFlags("ask"), "ask", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(words) < 2 {
		return usageError(stderr, "ask", `needs a run id and a question: researchbot ask RUN_ID "question"`)
	}
	runID, question := words[0], strings.Join(words[1:], " ")
	a, err := openStore(ctx, getenv, stderr, "the embedded Redis starts empty, so there is no run to ask about")
	if err != nil {
		return err
	}
	defer a.Close()
	r, f, err := a.Engine.Ask(ctx, runID, question, "terminal")
	var inv *pipeline.InvalidRequestError
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		return &exitError{code: 1, msg: "researchbot ask: no run " + runID + " (researchbot runs lists them)"}
	case errors.Is(err, pipeline.ErrNoReport):
		return &exitError{code: 1, msg: "researchbot ask: run " + runID + " has no report yet, so there are no sources to answer from"}
	case errors.As(err, &inv):
		return usageError(stderr, "ask", "%s", strings.Join(inv.Problems, "; "))
	case err != nil:
		return err
	}
	fmt.Fprintln(stdout, formatFollowUp(r.Report, f))
	return nil
}

// formatFollowUp renders a follow-up for the terminal: the answer with the
// sources it cites and how its citations were checked, or what the sources
// lack and how to research it.
func formatFollowUp(rep *pipeline.Report, f pipeline.FollowUp) string {
	var b strings.Builder
	if !f.Answered {
		fmt.Fprintf(&b, "The sources of this report don't answer this. %s\n", f.Missing)
		fmt.Fprintf(&b, "To research it: researchbot run %q\n", f.Question)
	} else {
		b.WriteString(strings.TrimSpace(f.Answer) + "\n")
		if f.Missing != "" {
			fmt.Fprintf(&b, "\nNot covered by the sources: %s\n", f.Missing)
		}
		var cited []int
		for _, c := range f.Claims {
			if !slices.Contains(cited, c.Ref) {
				cited = append(cited, c.Ref)
			}
		}
		b.WriteString("\nSources:\n")
		for _, ref := range rep.References {
			if slices.Contains(cited, ref.N) {
				fmt.Fprintf(&b, "[%d] %s — %s\n", ref.N, ref.Title, ref.URL)
			}
		}
		t := pipeline.TallyClaims(f.Claims)
		fmt.Fprintf(&b, "\n%d of %d citations checked against the pages' text.\n", t.Verified, t.Total)
		for _, c := range pipeline.Unsupported(f.Claims) {
			fmt.Fprintf(&b, "  not verified [%d]: %s — %s\n", c.Ref, oneLineCut(c.Sentence, 200), c.Reason)
		}
	}
	fmt.Fprintf(&b, "(follow-up %s, cost %s, added to the run's spend)", f.ID, pipeline.FormatUSD(f.CostUSD))
	return terminal.Clean(b.String())
}

// followUpNote is what `researchbot runs` adds to a run's question about its
// follow-ups and its parent.
func followUpNote(r *pipeline.Run) string {
	note := ""
	if n := len(r.FollowUps); n > 0 {
		note += fmt.Sprintf("  [%d follow-ups, %s]", n, pipeline.FormatUSD(r.FollowUpSpend()))
	}
	if r.Parent != "" {
		note += "  [follow-up of " + r.Parent + "]"
	}
	return note
}
