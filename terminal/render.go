package terminal

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// stageNames are the words people see for each step.
var stageOrder = []pipeline.Step{pipeline.StepPlan, pipeline.StepSearch, pipeline.StepRank, pipeline.StepFetch, pipeline.StepAnalyze, pipeline.StepWrite, pipeline.StepReview, pipeline.StepOutput}

// stageIndex is how far along the stages r is, for the bar.
func stageIndex(r *pipeline.Run) int {
	if r.Status.Final() {
		return len(stageOrder)
	}
	done := 0
	for i, s := range stageOrder {
		if s == r.Step {
			done = i
		}
	}
	return done
}

// progressLine is ProgressLine with the bar filled to done stages.
func progressLine(r *pipeline.Run, done int) string {
	done = min(done, len(stageOrder))
	bar := strings.Repeat("█", done) + strings.Repeat("░", len(stageOrder)-done)
	queries := 0
	for _, q := range r.Queries {
		if q.Status != "pending" {
			queries++
		}
	}
	line := fmt.Sprintf("[%s] %-8s queries %d · sources %d · pages %d · %s of work · %d tokens · $%.4f",
		bar, stageName(r), queries, len(r.Sources), len(r.Pages), r.Active.Round(time.Second),
		r.Spend.PromptTokens+r.Spend.CompletionTokens, r.Spend.CostUSD)
	switch n := len(r.Notes); {
	case n == 1:
		line += " · 1 steering note"
	case n > 1:
		line += fmt.Sprintf(" · %d steering notes", n)
	}
	return Clean(line)
}

// stageName is what the run is doing: its step, or the checkpoint it waits
// at (not the step it will take after it).
func stageName(r *pipeline.Run) string {
	if inst := r.Current(); r.Status == pipeline.StatusWaiting && inst != nil {
		return "waiting for you: " + inst.Label
	}
	if r.Status == pipeline.StatusWaiting {
		return "waiting"
	}
	return string(r.Step)
}

// DecisionLine is the one-line record of a decided checkpoint, cleaned for
// the terminal (the note is what a person typed, in Slack perhaps).
func DecisionLine(inst *checkpoints.Instance) string {
	if inst.Decision == nil {
		return Clean(fmt.Sprintf("· %s: %s", inst.Label, inst.State))
	}
	d := inst.Decision
	what := string(d.Action)
	if c := pipeline.Choices(inst)[d.Action]; c != "" {
		what = "chose “" + c + "”"
	}
	if d.By == checkpoints.ByTimeout {
		return Clean(fmt.Sprintf("✓ %s: approved itself at %s — nobody decided by its deadline, and it is set to approve itself then", inst.Label, d.At.Local().Format("15:04")))
	}
	line := fmt.Sprintf("✓ %s: %s by %s at %s", inst.Label, what, d.By, d.At.Format("15:04"))
	for _, a := range inst.Audit {
		for _, c := range a.Changes {
			line += fmt.Sprintf("\n    changed %s", c.Key)
		}
	}
	if d.Note != "" {
		line += "\n    note: " + d.Note
	}
	return Clean(line)
}

// RenderCheckpoint shows what the person must judge, as plain text cleaned
// for the terminal: questions, page titles and drafts come from people, web
// pages and the model.
func RenderCheckpoint(inst checkpoints.Instance) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n━━ %s", inst.Label)
	if inst.Attempt > 1 {
		fmt.Fprintf(&b, " (reminder: still waiting for your decision)")
	}
	b.WriteString(" ━━\n")
	switch inst.ControlType {
	case checkpoints.PlanReview:
		var p pipeline.PlanPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			renderPlan(&b, p)
		}
	case checkpoints.SourceReview:
		var p pipeline.SourcesPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			renderSources(&b, p)
		}
	case checkpoints.DraftReview:
		var p pipeline.DraftPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			renderDraft(&b, p)
		}
	case checkpoints.CriticalIssues:
		var p pipeline.CriticalPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			renderCritical(&b, p)
		}
	case checkpoints.Clarify:
		var p pipeline.ClarifyPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			renderClarify(&b, inst, p)
		}
	default:
		renderPositionPayload(&b, inst.Payload)
		renderFields(&b, inst)
	}
	switch {
	case inst.ControlType == checkpoints.Clarify:
		// renderClarify said what each answer does.
	case inst.ControlType == checkpoints.CriticalIssues:
		b.WriteString("[a]pprove: publish it as it is · [e]dit: revise with these issues (a note for the writer if you like) · [r]eject: stop and write what you have\n")
	case pipeline.Choices(&inst) != nil:
		b.WriteString("The reviewer did not pass this draft; it is yours to judge.\n[a]pprove: publish with a caveat (the report says the reviewer did not pass it) · [e]dit: revise with your instructions (the changes field) · [r]eject: stop and write what you have (a partial report)\n")
		var p pipeline.DraftPayload
		if json.Unmarshal(inst.Payload, &p) == nil && p.AtRevisionLimit {
			b.WriteString("The revision limit is reached: changes asked for now end the run with a partial report that says so.\n")
		}
	case !inst.Required:
		b.WriteString("This checkpoint is optional: [s]kip goes on without deciding it.\n")
	}
	if !inst.RemindersStoppedAt.IsZero() {
		b.WriteString(upperFirst(remindersStoppedLine(inst.RunID, &inst)) + ".\n")
	}
	if inst.OnTimeout == checkpoints.TimeoutApprove && !inst.DeadlineAt.IsZero() {
		fmt.Fprintf(&b, "It approves itself at %s if nobody decides.\n", inst.DeadlineAt.Local().Format("2006-01-02 15:04 MST"))
	}
	return Clean(b.String())
}

func renderPlan(b *strings.Builder, p pipeline.PlanPayload) {
	fmt.Fprintf(b, "Question: %s\n\nSub-questions:\n", p.Question)
	for i, s := range p.SubQuestions {
		fmt.Fprintf(b, "  %d. %s\n", i+1, s)
	}
	b.WriteString("\nSearch queries:\n")
	for i, q := range p.Queries {
		fmt.Fprintf(b, "  %d. [%s] %s\n", i+1, q.Kind, q.Text)
	}
	if len(p.Sections) > 0 {
		fmt.Fprintf(b, "\nSections: %s\n", strings.Join(p.Sections, " · "))
	}
	if p.Methodology != "" {
		fmt.Fprintf(b, "Method: %s\n", p.Methodology)
	}
	if p.Domains != "" {
		fmt.Fprintf(b, "Sources: %s\n", p.Domains)
	}
	if f := pipeline.FilesAttached(p.Files); f != "" {
		fmt.Fprintf(b, "Files: %s\n", f)
	}
	if len(p.Assumptions) > 0 {
		fmt.Fprintf(b, "Assumes: %s\n", strings.Join(p.Assumptions, " · "))
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(b, "⚠ %s\n", w)
	}
	e := p.Estimate
	fmt.Fprintf(b, "\nEstimate: about $%.2f and %s (%d searches, %d pages, %d LLM calls)\n",
		e.CostUSD, e.Duration.Round(time.Second), e.Searches, e.PagesToRead, e.LLMCalls)
}

func renderSources(b *strings.Builder, p pipeline.SourcesPayload) {
	fmt.Fprintf(b, "%d sources found; %d will be read. Best first:\n", p.Total, p.ToFetch)
	for _, s := range p.Sources {
		mark := " "
		if s.Selected {
			mark = "•"
		}
		date := ""
		if !s.Published.IsZero() {
			date = " · " + s.Published.Format("2006-01-02")
		}
		fmt.Fprintf(b, " %s [%d] %s — %s%s\n", mark, s.ID, s.Title, s.Domain, date)
		if s.Gist != "" {
			fmt.Fprintf(b, "       %s\n", s.Gist)
		}
	}
	for _, e := range p.Errors {
		fmt.Fprintf(b, "⚠ %s\n", e)
	}
	b.WriteString("(• = selected to read; edit to mark relevant or exclude by their [numbers])\n")
}

func renderDraft(b *strings.Builder, p pipeline.DraftPayload) {
	if p.Markdown != "" {
		// The whole draft: the person approves what they have read.
		fmt.Fprintf(b, "%s\n────────\n", strings.TrimRight(p.Markdown, "\n"))
	}
	fmt.Fprintf(b, "Draft %d: %s\n%d words from %d sources. Review score %.1f/10 (%s); %d major and %d minor issues.\n",
		p.Version, p.Title, p.WordCount, p.Sources, p.Score, p.Recommendation, p.Major, p.Minor)
	if p.Summary != "" {
		fmt.Fprintf(b, "Reviewer: %s\n", p.Summary)
	}
	if c := p.Claims; c.Checked {
		fmt.Fprintf(b, "Evidence: %s\n", c.ClaimTally)
		for _, u := range c.Unsupported {
			fmt.Fprintf(b, "  ⚠ %s — “%s”\n", u.Location, u.Sentence)
			for _, s := range append([]pipeline.ClaimView{u}, u.Also...) {
				fmt.Fprintf(b, "    cites %s: %s\n", s.Source, s.Reason)
			}
		}
		if n := c.Unlisted(); n > 0 {
			fmt.Fprintf(b, "  …and %d more unsupported claims\n", n)
		}
	}
	if p.Diff != nil {
		fmt.Fprintf(b, "Changes from draft %d: %s\n", p.Diff.From, p.Diff.Summary())
	}
	if p.Evidence != "" {
		fmt.Fprintf(b, "Evidence behind the key findings: %s\n", p.Evidence)
	}
	if len(p.Disagreements) > 0 {
		b.WriteString("Where sources disagree (edit to choose the reading the report should take):\n")
		for _, d := range p.Disagreements {
			fmt.Fprintf(b, "  %d. %s\n", d.N, d.Topic)
			for _, s := range []struct {
				label string
				side  pipeline.SideView
			}{{"A", d.A}, {"B", d.B}} {
				var names []string
				for _, src := range s.side.Sources {
					names = append(names, fmt.Sprintf("[%d] %s", src.ID, src.Title))
				}
				mark := ""
				if strings.EqualFold(d.Chosen, s.label) {
					mark = " ✓ chosen"
				}
				fmt.Fprintf(b, "     %s: %s — %s%s\n", s.label, s.side.Claim, strings.Join(names, ", "), mark)
			}
			if d.Assessment != "" {
				fmt.Fprintf(b, "     Assessment: %s\n", d.Assessment)
			}
		}
	}
	if line := pipeline.CoverageSummary(p.Coverage); line != "" {
		fmt.Fprintf(b, "%s\n", line)
	}
}

// maxListedPerSeverity bounds the issues of one severity (other than
// critical, always listed in full) that the critical issues show.
const maxListedPerSeverity = 4

// renderCritical lists the reviewer's issues grouped by severity, worst
// first: every critical one with its fix, then at most a few of each other
// severity on one line each, and what was left out by category.
func renderCritical(b *strings.Builder, p pipeline.CriticalPayload) {
	fmt.Fprintf(b, "The reviewer found critical issues in draft %d “%s” (score %.1f):\n", p.Version, p.Title, p.Score)
	var order []string
	groups := map[string][]pipeline.CritiqueItem{}
	for _, it := range p.Items { // the payload lists the critical ones first
		sev := strings.ToLower(strings.TrimSpace(it.Severity))
		if _, ok := groups[sev]; !ok {
			order = append(order, sev)
		}
		groups[sev] = append(groups[sev], it)
	}
	for _, sev := range order {
		items := groups[sev]
		fmt.Fprintf(b, "%s (%d):\n", upperFirst(nonEmpty(sev, "unrated")), len(items))
		shown := items
		if sev != "critical" && len(items) > maxListedPerSeverity {
			shown = items[:maxListedPerSeverity]
		}
		for i, it := range shown {
			line := fmt.Sprintf("  %d. [%s] %s", i+1, it.Category, cut(it.Description, 160))
			if sev == "critical" && it.SuggestedFix != "" {
				line += " → " + cut(it.SuggestedFix, 160)
			}
			b.WriteString(line + "\n")
		}
		if left := items[len(shown):]; len(left) > 0 {
			counts := map[string]int{}
			var cats []string
			for _, it := range left {
				if counts[it.Category] == 0 {
					cats = append(cats, it.Category)
				}
				counts[it.Category]++
			}
			parts := make([]string, len(cats))
			for i, c := range cats {
				parts[i] = fmt.Sprintf("%d %s", counts[c], nonEmpty(c, "other"))
			}
			fmt.Fprintf(b, "  …and %d more: %s\n", len(left), strings.Join(parts, ", "))
		}
	}
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// cut shortens s, on one line, to at most n runes.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// renderPositionPayload shows what a custom checkpoint is about: the
// pipeline gives every checkpoint at a position that position's payload
// (the plan, the sources, the critical issues, the draft), known by its
// fields.
func renderPositionPayload(b *strings.Builder, raw []byte) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return
	}
	has := func(k string) bool { _, ok := keys[k]; return ok }
	switch {
	case has("sub_questions") && has("queries"):
		var p pipeline.PlanPayload
		if json.Unmarshal(raw, &p) == nil {
			renderPlan(b, p)
		}
	case has("to_fetch"):
		var p pipeline.SourcesPayload
		if json.Unmarshal(raw, &p) == nil {
			renderSources(b, p)
		}
	case has("word_count"):
		var p pipeline.DraftPayload
		if json.Unmarshal(raw, &p) == nil {
			renderDraft(b, p)
		}
	case has("items"):
		var p pipeline.CriticalPayload
		if json.Unmarshal(raw, &p) == nil {
			renderCritical(b, p)
		}
	default:
		return
	}
	b.WriteString("────────\n")
}

// renderFields shows a checkpoint that is not a built-in one field by
// field, as its form asks them: each field's label and help, its options
// and its current value.
func renderFields(b *strings.Builder, inst checkpoints.Instance) {
	if len(inst.Fields) == 0 {
		b.WriteString("(nothing to fill in: approve or reject)\n")
		return
	}
	for _, f := range inst.Fields {
		req := ""
		if f.Required {
			req = " (required)"
		}
		fmt.Fprintf(b, "%s%s", f.Label, req)
		if f.Help != "" {
			fmt.Fprintf(b, " — %s", f.Help)
		}
		b.WriteString("\n")
		for _, o := range f.Options {
			fmt.Fprintf(b, "  · %s\n", o.Label)
		}
		if v, ok := inst.Values[f.Key]; ok {
			fmt.Fprintf(b, "  current: %s\n", display(v))
		}
	}
}
