package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// applyDecision turns a submitted decision into the run's next step (seed 000
// §2, generalised): approve proceeds; edit uses the revised data; reject turns
// the note into feedback for another iteration, bounded by MaxIterations.
// Then it collapses the checkpoint, saves, and tells the presenter.
func (e *Engine) applyDecision(ctx context.Context, r *Run, inst *checkpoints.Instance) error {
	now := e.cfg.Clock.Now()
	d := inst.Decision
	if d == nil {
		return fmt.Errorf("checkpoint %s is submitted without a decision", inst.ID)
	}
	switch inst.DefinitionID {
	case checkpoints.PlanReview:
		r.decidePlan(d)
	case checkpoints.SourceReview:
		r.decideSources(d)
	case checkpoints.CriticalIssues:
		r.decideCritical(d)
	case checkpoints.DraftReview:
		r.decideDraft(d)
	case checkpoints.Clarify:
		r.decideClarify(d)
	default:
		r.decideCustom(inst, d)
	}
	r.trace(now, r.Step, "%s: %s by %s", inst.DefinitionID, d.Action, d.By)
	if err := inst.Collapse(now); err != nil {
		return err
	}
	r.leaveCheckpoint()
	if err := e.save(ctx, r); err != nil {
		return err
	}
	if err := e.presenter(r).Decided(ctx, r, inst); err != nil {
		e.log.Warn("collapse decided checkpoint", "run", r.ID, "checkpoint", inst.ID, "err", err)
	}
	return nil
}

func (r *Run) addFeedback(def string, d *checkpoints.Decision, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	r.Feedback = append(r.Feedback, Feedback{Checkpoint: def, Action: string(d.Action), Text: text, By: d.By, At: d.At})
}

func stringValue(v map[string]any, key string) string {
	s, _ := v[key].(string)
	return strings.TrimSpace(s)
}

func stringsValue(v map[string]any, key string) []string {
	switch x := v[key].(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		if x != "" {
			return []string{x}
		}
	}
	return nil
}

func lines(s string) []string { return cleanLines(strings.Split(s, "\n")) }

// parseQueryLine reads "kind: text" (kind optional) as a query.
func parseQueryLine(line string) Query {
	if k, rest, ok := strings.Cut(line, ":"); ok {
		if kind := strings.ToLower(strings.TrimSpace(k)); slices.Contains(QueryKinds, kind) {
			return Query{Kind: kind, Text: strings.TrimSpace(rest)}
		}
	}
	return Query{Kind: "web", Text: strings.TrimSpace(line)}
}

func (r *Run) canIterate() bool { return r.Counters.Iteration < r.Limits.MaxIterations }

func (r *Run) decidePlan(d *checkpoints.Decision) {
	switch d.Action {
	case checkpoints.Edit:
		v := d.Values
		if subs := lines(stringValue(v, checkpoints.KeySubQuestions)); len(subs) > 0 {
			if len(subs) > maxSubQuestions {
				r.addBound(fmt.Sprintf("the edited plan had %d sub-questions; the first %d were kept", len(subs), maxSubQuestions))
				subs = subs[:maxSubQuestions]
			}
			r.Plan.SubQuestions = subs
		}
		if secs := lines(stringValue(v, checkpoints.KeySections)); len(secs) > 0 {
			r.Plan.Sections = secs
		}
		if qs := lines(stringValue(v, checkpoints.KeyQueries)); len(qs) > 0 {
			if len(qs) > maxQueries {
				r.addBound(fmt.Sprintf("the edited plan had %d queries; the first %d were searched", len(qs), maxQueries))
			}
			var queries []Query
			for _, l := range qs[:min(len(qs), maxQueries)] {
				if q := parseQueryLine(l); q.Text != "" {
					queries = append(queries, q)
				}
			}
			r.SearchRoundQueries(queries)
		}
		if dep, ok := ParseDepth(stringValue(v, checkpoints.KeyDepth)); ok && stringValue(v, checkpoints.KeyDepth) != "" {
			r.Depth = dep
		}
		r.Plan.EditedBy = d.By
		r.addFeedback(checkpoints.PlanReview, d, stringValue(v, checkpoints.KeyNote))
		r.Step = StepSearch
	case checkpoints.Reject:
		note := orDefault(d.Note, "The plan was rejected without a reason; propose a different decomposition.")
		r.addFeedback(checkpoints.PlanReview, d, note)
		r.replan(d, fmt.Sprintf("rejected at plan review by %s: %s", d.By, note))
	default:
		r.Step = StepSearch
	}
}

// replan sends the run back to the planner with its feedback, keeping the
// rejected plan in the history, within the iteration bound.
func (r *Run) replan(d *checkpoints.Decision, why string) {
	r.recordPlanAttempt(why, d.At)
	if r.Counters.PlanRounds > r.Limits.MaxIterations {
		r.addBound(fmt.Sprintf("the plan was rejected %d times (limit %d)", r.Counters.PlanRounds, r.Limits.MaxIterations))
		r.toFallback("the research plan was rejected too often")
		return
	}
	r.Step = StepPlan
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func (r *Run) markSources(ids []string, mark func(*Source)) {
	for _, id := range ids {
		n, err := strconv.Atoi(id)
		if err != nil {
			continue
		}
		for i := range r.Sources {
			if r.Sources[i].ID == n {
				mark(&r.Sources[i])
			}
		}
	}
}

// rejectUnmarkedSources excludes the offered sources a person did not mark
// relevant: "search differently" must not bring the same ones back.
func (r *Run) rejectUnmarkedSources() {
	for i := range r.Sources {
		if s := &r.Sources[i]; !s.Relevant && !s.Fetched {
			s.Excluded, s.Selected = true, false
		}
	}
}

// searchAgain sends the run back to planning new queries with the feedback,
// keeping sources marked relevant (they accumulate across iterations) and
// recording the plan that led here and why it is replaced. When the run may
// not search again (its iteration bound, or too many failed searches) it
// goes on with the sources found.
func (r *Run) searchAgain(d *checkpoints.Decision, why string) {
	switch {
	case r.Counters.SearchRound > r.Limits.MaxIterations:
		r.addBound(fmt.Sprintf("search iteration limit (%d) reached; continued with the sources found", r.Limits.MaxIterations))
	case r.searchStopped():
		r.noteSearchStopped()
	default:
		r.recordPlanAttempt(fmt.Sprintf("sources rejected at source review by %s: %s", d.By, why), d.At)
		r.Step = StepPlan
		return
	}
	r.selectSources()
	r.Step = StepFetch
}

// recordPlanAttempt keeps the current plan, with the searches of its latest
// round, in the plan history with the reason it is replaced.
func (r *Run) recordPlanAttempt(outcome string, at time.Time) {
	if r.Plan == nil {
		return
	}
	a := PlanAttempt{Round: r.Counters.PlanRounds, SubQuestions: slices.Clone(r.Plan.SubQuestions), Outcome: flatLine(outcome), At: at}
	last := 0
	for _, q := range r.Queries {
		last = max(last, q.Round)
	}
	for _, q := range r.Queries {
		if q.Round == last {
			a.Queries = append(a.Queries, q.Kind+": "+q.Text)
		}
	}
	r.PlanHistory = append(r.PlanHistory, a)
}

func (r *Run) decideSources(d *checkpoints.Decision) {
	switch d.Action {
	case checkpoints.Edit:
		r.markSources(stringsValue(d.Values, checkpoints.KeyRelevant), func(s *Source) { s.Relevant, s.Excluded = true, false })
		r.markSources(stringsValue(d.Values, checkpoints.KeyExclude), func(s *Source) { s.Excluded, s.Selected, s.Relevant = true, false, false })
		r.selectSources()
		if fb := stringValue(d.Values, checkpoints.KeyFeedback); fb != "" {
			r.addFeedback(checkpoints.SourceReview, d, fb)
			r.rejectUnmarkedSources()
			r.searchAgain(d, fb)
			return
		}
		r.Step = StepFetch
	case checkpoints.Reject:
		note := orDefault(d.Note, "These sources were rejected; search differently.")
		r.addFeedback(checkpoints.SourceReview, d, note)
		r.rejectUnmarkedSources()
		r.searchAgain(d, note)
	default:
		r.Step = StepFetch
	}
}

// humanCritique makes a person's requested changes the writer's next critique.
func (r *Run) humanCritique(d *checkpoints.Decision, text string) {
	version := 0
	if len(r.Drafts) > 0 {
		version = r.Drafts[len(r.Drafts)-1].Version
	}
	r.Critiques = append(r.Critiques, Critique{DraftVersion: version, Human: text, By: d.By, Summary: "Requested by " + d.By + ": " + text, Recommendation: "revise"})
}

// revise sends the run back to the writer if the iteration bound allows.
func (r *Run) revise(what string) {
	if !r.canIterate() {
		r.addBound(fmt.Sprintf("revision limit (%d) reached; %s could not be applied", r.Limits.MaxIterations, what))
		r.toFallback(fmt.Sprintf("maximum revision iterations (%d) reached", r.Limits.MaxIterations))
		return
	}
	r.Counters.Iteration++
	r.Step = StepWrite
}

// decideCritical applies the person's choice at the critical issues (asked
// only while a revision is possible), one per action: Edit is "Revise with
// these issues" (the guidance, if any, goes to the writer with them),
// Approve is "Publish as it is", Reject is "Stop and write what you have"
// (a partial report with what the run has; the note says why).
func (r *Run) decideCritical(d *checkpoints.Decision) {
	switch d.Action {
	case checkpoints.Reject:
		r.FallbackReason = flatLine("stopped at the critical issues by " + d.By + ": " + orDefault(d.Note, "no reason given"))
		r.Step = StepFallback
	case checkpoints.Approve:
		r.addReviewNote(fmt.Sprintf("The reviewer found critical issues in draft %d; %s chose to publish it as it is.", r.lastReview().DraftVersion, d.By))
		if r.FallbackReason != "" && r.Step == StepFallback {
			r.FallbackReason = ""
		}
		r.Step = StepOutput
	default:
		r.humanCritique(d, orDefault(stringValue(d.Values, checkpoints.KeyGuidance), "Fix the critical issues the reviewer found."))
		if r.Step != StepWrite { // the reviewer's routing has not already sent it back
			r.revise("the requested fixes")
		}
	}
}

// lastReview returns the reviewer's latest critique (people's requests are
// critiques too, and are skipped).
func (r *Run) lastReview() Critique {
	for i := len(r.Critiques) - 1; i >= 0; i-- {
		if r.Critiques[i].Human == "" {
			return r.Critiques[i]
		}
	}
	return Critique{}
}

// unpassedDraft returns the reviewer's critique of the latest draft and
// true when the reviewer did not pass it (Critique.notPassed).
func (r *Run) unpassedDraft() (Critique, bool) {
	c := r.lastReview()
	if len(r.Drafts) == 0 || c.DraftVersion != r.Drafts[len(r.Drafts)-1].Version {
		return c, false
	}
	return c, c.notPassed()
}

// decideDraft applies the person's choice at the draft review. For a draft
// the reviewer passed: Approve publishes, Edit publishes with a new title or
// revises with the changes asked for, Reject asks for a rewrite. For a draft
// the reviewer did not pass, the three are the choices a person has then:
// Approve is "Publish with a caveat" (the report says the reviewer did not
// pass it and who chose to publish), Edit is "Revise with my instructions",
// Reject is "Stop and write what you have" (a partial report).
func (r *Run) decideDraft(d *checkpoints.Decision) {
	if c, ok := r.unpassedDraft(); ok {
		r.decideUnpassedDraft(d, c)
		return
	}
	switch d.Action {
	case checkpoints.Edit:
		if t := stringValue(d.Values, checkpoints.KeyTitle); t != "" && len(r.Drafts) > 0 {
			r.Drafts[len(r.Drafts)-1].Title = t
		}
		var asks []string
		if ch := stringValue(d.Values, checkpoints.KeyChanges); ch != "" {
			asks = append(asks, ch)
		}
		asks = append(asks, r.chooseReadings(d)...)
		if note := stringValue(d.Values, checkpoints.KeyReadingNote); note != "" {
			asks = append(asks, "On where the sources disagree: "+note)
		}
		if len(asks) > 0 {
			r.humanCritique(d, strings.Join(asks, "\n"))
			r.revise("the requested changes")
			return
		}
		r.Step = StepOutput
	case checkpoints.Reject:
		r.humanCritique(d, orDefault(d.Note, "The draft was rejected; rewrite it."))
		r.revise("the rejection")
		if r.Step == StepFallback {
			r.FallbackReason = "the draft was rejected by " + d.By + " at the revision limit"
		}
	default:
		r.Step = StepOutput
	}
}

// chooseReadings records the readings a person chose where sources disagree
// (the readings field: "1a", "2b", …) and returns what the writer must do
// for each. Choosing both readings of one disagreement asks the report to
// present both.
func (r *Run) chooseReadings(d *checkpoints.Decision) []string {
	cited := citedContradictions(r.Analysis)
	chosen := map[int][]string{}
	var order []int
	for _, v := range stringsValue(d.Values, checkpoints.KeyReadings) {
		n, reading, ok := parseReading(v)
		if !ok || n > len(cited) || slices.Contains(chosen[n], reading) {
			continue
		}
		if len(chosen[n]) == 0 {
			order = append(order, n)
		}
		chosen[n] = append(chosen[n], reading)
	}
	var asks []string
	for _, n := range order {
		c := cited[n-1]
		if len(chosen[n]) == 2 {
			asks = append(asks, fmt.Sprintf("Where the sources disagree on %q, present both readings as equally credible: %q [%s] and %q [%s].",
				flatLine(c.Topic), flatLine(c.A.Claim), joinInts(c.A.Sources), flatLine(c.B.Claim), joinInts(c.B.Sources)))
			continue
		}
		side := c.Side(chosen[n][0])
		asks = append(asks, fmt.Sprintf("Where the sources disagree on %q, the report should take this reading: %q [%s].", flatLine(c.Topic), flatLine(side.Claim), joinInts(side.Sources)))
		r.markChosen(c, chosen[n][0], d.By)
	}
	return asks
}

// markChosen records on the analysis the reading a person chose for c.
func (r *Run) markChosen(c Contradiction, reading, by string) {
	for i := range r.Analysis.Contradictions {
		a := &r.Analysis.Contradictions[i]
		if a.Topic == c.Topic && a.A.Claim == c.A.Claim && a.B.Claim == c.B.Claim {
			a.Chosen, a.ChosenBy = reading, by
		}
	}
}

// decideUnpassedDraft is decideDraft for a draft the reviewer did not pass
// (its critique c).
func (r *Run) decideUnpassedDraft(d *checkpoints.Decision, c Critique) {
	verdict := fmt.Sprintf("The reviewer did not pass draft %d (score %.1f, recommended %s)", c.DraftVersion, c.Score, c.Recommendation)
	switch d.Action {
	case checkpoints.Reject:
		r.FallbackReason = flatLine(fmt.Sprintf("%s; %s chose to stop at the draft review: %s", verdict, d.By, orDefault(d.Note, "no reason given")))
		r.Step = StepFallback
		return
	case checkpoints.Edit:
		if t := stringValue(d.Values, checkpoints.KeyTitle); t != "" {
			r.Drafts[len(r.Drafts)-1].Title = t
		}
		if ch := stringValue(d.Values, checkpoints.KeyChanges); ch != "" {
			r.humanCritique(d, ch)
			r.revise("the requested changes")
			return
		}
	}
	r.addReviewNote(fmt.Sprintf("%s; %s chose to publish it with this caveat.", verdict, d.By))
	r.Step = StepOutput
}
