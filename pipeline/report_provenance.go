package pipeline

// A report's provenance (seed 001 §4.4.3): what it rests on, the sources that
// could not be read, every checkpoint outcome, and the sources marked
// relevant but not cited.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// provenance records what a report rests on.
func provenance(r *Run) Provenance {
	p := Provenance{Question: r.Question, SubQuestions: []string{}, Decisions: decisions(r), Trace: []string{}, Files: filesText(r.Files)}
	if r.Plan != nil {
		p.SubQuestions = slices.Clone(r.Plan.SubQuestions)
	}
	if r.Analysis != nil {
		p.Coverage = slices.Clone(r.Analysis.Coverage)
	}
	for _, q := range r.Queries {
		if q.Status == "completed" {
			p.QueriesExecuted++
		}
	}
	for _, t := range r.Trace {
		p.Trace = append(p.Trace, fmt.Sprintf("%s %s: %s", t.At.UTC().Format(time.RFC3339), t.Step, flatLine(t.Message)))
	}
	p.Unread = unread(r)
	p.Withheld = WithheldText(r.Withheld.Count)
	p.SearchNotes = slices.Clone(r.SearchNotes)
	p.Retried = retriedSearches(r)
	p.Steering = steeringProvenance(r)
	p.Clarified = clarifyProvenance(r)
	p.Evidence = GradeCounts(r.Analysis)
	return p
}

// maxUnreadListed bounds the unread sources a report names one by one.
const maxUnreadListed = 10

// unread names the sources whose reading failed, with the reason (an
// encrypted or scanned PDF, a timeout, …), without the "fetch <url>: "
// prefix the fetcher's errors carry; near-duplicates were read and are
// not listed.
func unread(r *Run) []string {
	var out []string
	n := 0
	for _, s := range r.Sources {
		if s.FetchErr == "" || strings.HasPrefix(s.FetchErr, "near-duplicate of ") {
			continue
		}
		if n++; n > maxUnreadListed {
			continue
		}
		why := strings.TrimPrefix(s.FetchErr, "fetch "+s.URL+": ")
		out = append(out, clipText(flatLine(strings.TrimSpace(s.URL)+" — "+why), 300))
	}
	if n > maxUnreadListed {
		out = append(out, fmt.Sprintf("…and %d more", n-maxUnreadListed))
	}
	return out
}

// decisions renders every checkpoint outcome of the run from the instances'
// audit trails: decisions (who, what, when, and a note), skips, timeouts and
// failures, in order.
func decisions(r *Run) []string {
	out := []string{}
	for _, inst := range r.Checkpoints {
		name := nonBlank(inst.DefinitionID, inst.Label)
		for _, a := range inst.Audit {
			var line string
			switch a.To {
			case checkpoints.StateSubmitted:
				action := "decided"
				if inst.Decision != nil {
					action = string(inst.Decision.Action)
				}
				line = fmt.Sprintf("%s: %s by %s", name, action, nonBlank(a.Actor, "unknown"))
				if len(a.Changes) > 0 {
					keys := make([]string, len(a.Changes))
					for i, ch := range a.Changes {
						keys[i] = ch.Key
					}
					line += " (changed " + strings.Join(keys, ", ") + ")"
				}
			case checkpoints.StateSkipped:
				line = name + ": skipped"
			case checkpoints.StateTimedOut:
				line = name + ": timed out"
			case checkpoints.StateFailed:
				line = name + ": failed"
			default:
				continue
			}
			if !a.At.IsZero() {
				line += " at " + a.At.UTC().Format(time.RFC3339)
			}
			if a.Note != "" {
				line += " — " + flatLine(a.Note)
			}
			out = append(out, line)
		}
	}
	return out
}

// alsoRelevant lists the sources a person marked relevant (and did not
// exclude later) that the report does not cite.
func alsoRelevant(r *Run, refs []Reference) []AlsoRelevant {
	cited := map[int]bool{}
	for _, ref := range refs {
		cited[ref.SourceID] = true
	}
	var out []AlsoRelevant
	for _, s := range r.Sources {
		if !s.Relevant || s.Excluded || cited[s.ID] {
			continue
		}
		out = append(out, AlsoRelevant{Title: flatLine(nonBlank(s.Title, hostDomain(s.URL))), URL: strings.TrimSpace(s.URL), Domain: hostDomain(s.URL), Read: s.Fetched})
	}
	return out
}
