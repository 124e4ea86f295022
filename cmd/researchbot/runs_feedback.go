package main

import (
	"fmt"
	"strings"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// formatVerdicts lists what people said about the reports of runs, for
// `researchbot runs --feedback`: per run with verdicts, the tally of the
// report's verdicts, then one line per verdict (on a follow-up answer: the
// answer's id) with its reason, cleaned for the terminal.
func formatVerdicts(runs []*pipeline.Run) string {
	var b strings.Builder
	n := 0
	for _, r := range runs {
		if len(r.Verdicts) == 0 {
			continue
		}
		n++
		up, down := r.VerdictTally()
		fmt.Fprintf(&b, "%s  useful %d  not useful %d  %s\n", r.ID, up, down, oneLineCut(r.Question, 60))
		for _, v := range r.Verdicts {
			verdict := "useful"
			if !v.Useful {
				verdict = "not useful"
			}
			line := fmt.Sprintf("  %s %-10s %s", v.At.UTC().Format("2006-01-02 15:04"), verdict, v.By)
			if v.On != "" {
				line += " on answer " + v.On
			}
			if v.Reason != "" {
				line += ": " + oneLineCut(v.Reason, 200)
			}
			b.WriteString(line + "\n")
		}
	}
	if n == 0 {
		return "no feedback on these runs yet"
	}
	return terminal.Clean(strings.TrimRight(b.String(), "\n"))
}

// oneLineCut is s on one line, cleaned, cut to limit runes.
func oneLineCut(s string, limit int) string {
	s = strings.Join(strings.Fields(terminal.Clean(s)), " ")
	if rs := []rune(s); len(rs) > limit {
		s = string(rs[:limit-1]) + "…"
	}
	return s
}
