package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// Coverage statuses: how well the pages read answer a sub-question.
const (
	CoverageAnswered   = "answered"
	CoveragePartly     = "partly"
	CoverageUnanswered = "unanswered"
)

// newCoverage states, for every sub-question of the plan, what the analyst
// found: answered, partly or unanswered, a summary and the pages that bear
// on it. Only pages the run read count: an answer that names none is
// unanswered. A sub-question the analyst did not assess has Status "".
func newCoverage(subs []string, out []CoverageOutput, fetched map[int]bool) []Coverage {
	if len(subs) == 0 {
		return nil
	}
	cov := make([]Coverage, len(subs))
	for i, q := range subs {
		cov[i].Question = q
	}
	for _, o := range out {
		if o.Number < 1 || o.Number > len(subs) || cov[o.Number-1].Status != "" {
			continue
		}
		c := &cov[o.Number-1]
		for _, id := range o.SourceIDs {
			if fetched[id] && !slices.Contains(c.Sources, id) {
				c.Sources = append(c.Sources, id)
			}
		}
		c.Summary = flatLine(o.Summary)
		switch strings.ToLower(strings.TrimSpace(o.Status)) {
		case CoverageAnswered:
			c.Status = CoverageAnswered
		case CoveragePartly:
			c.Status = CoveragePartly
		default:
			c.Status = CoverageUnanswered
		}
		if len(c.Sources) == 0 {
			c.Status = CoverageUnanswered
		}
	}
	return cov
}

// coverageLine counts sub-questions by status: "2 of 3 sub-questions
// answered, 1 partly".
func coverageLine(cov []Coverage) string {
	if len(cov) == 0 {
		return "no sub-questions assessed"
	}
	n := map[string]int{}
	for _, c := range cov {
		n[c.Status]++
	}
	line := fmt.Sprintf("%d of %d sub-questions answered", n[CoverageAnswered], len(cov))
	if n[CoveragePartly] > 0 {
		line += fmt.Sprintf(", %d partly", n[CoveragePartly])
	}
	if n[""] > 0 {
		line += fmt.Sprintf(", %d not assessed", n[""])
	}
	return line
}

// CoverageText says in words how a sub-question was answered, for people.
func CoverageText(c Coverage) string {
	switch c.Status {
	case CoverageAnswered:
		return fmt.Sprintf("answered by the sources (%s)", pagesCount(len(c.Sources)))
	case CoveragePartly:
		return fmt.Sprintf("partly answered (%s)", pagesCount(len(c.Sources)))
	case CoverageUnanswered:
		return "not answered by the sources read"
	}
	return "not assessed"
}

func pagesCount(n int) string {
	if n == 1 {
		return "1 source"
	}
	return fmt.Sprintf("%d sources", n)
}

// CoverageSummary says in one line, for people, how many sub-questions the
// sources answered and names the others: "1 of 3 sub-questions answered by
// the sources · 2. … — partly answered (1 source) · 3. … — not answered by
// the sources read". It is "" without coverage.
func CoverageSummary(cov []Coverage) string {
	if len(cov) == 0 {
		return ""
	}
	answered := 0
	var open []string
	for i, c := range cov {
		if c.Status == CoverageAnswered {
			answered++
			continue
		}
		open = append(open, fmt.Sprintf("%d. %s — %s", i+1, flatLine(c.Question), CoverageText(c)))
	}
	return strings.Join(append([]string{fmt.Sprintf("%d of %d sub-questions answered by the sources", answered, len(cov))}, open...), " · ")
}
