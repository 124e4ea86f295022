package blockkit

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// RootInfo is what the root message of a run shows.
type RootInfo struct {
	Question    string
	RunID       string // "" while the run is being created
	RequestedBy string
	Mode        string
	Depth       pipeline.Depth
	Status      pipeline.Status // "" while starting
}

// RenderRoot renders the message in the channel that names the question and
// the run; everything else about the run happens in its thread.
func RenderRoot(r RootInfo) []slack.Block {
	q := EscapeTruncate(strings.TrimSpace(r.Question), 2500)
	lines := fmt.Sprintf(":mag: *Research request* from %s\n>%s", Who(r.RequestedBy), strings.ReplaceAll(q, "\n", "\n>"))
	meta := []string{"run " + RunRef(r.RunID)}
	if r.Mode != "" {
		meta = append(meta, "mode "+Escape(Truncate(r.Mode, 20)))
	}
	if r.Depth != "" {
		meta = append(meta, "depth "+Escape(Truncate(string(r.Depth), 20)))
	}
	status := StatusText(r.Status)
	if r.RunID == "" {
		status = ":hourglass_flowing_sand: starting…"
	}
	meta = append(meta, status)
	return []slack.Block{
		Section(CutRunes(lines, MaxSectionText)),
		ContextText(strings.Join(meta, " · ") + " · follow along in the thread"),
	}
}

// RootText is the notification text of a root message.
func RootText(r RootInfo) string {
	return "Research request: " + EscapeTruncate(OneLine(r.Question), 200)
}

// StatusText describes a run status for people.
func StatusText(s pipeline.Status) string {
	switch s {
	case pipeline.StatusQueued:
		return ":hourglass_flowing_sand: queued"
	case pipeline.StatusRunning:
		return ":gear: working"
	case pipeline.StatusWaiting:
		return ":raising_hand: waiting for a decision"
	case pipeline.StatusCompleted:
		return ":white_check_mark: done"
	case pipeline.StatusPartial:
		return ":large_yellow_circle: done, partial"
	case pipeline.StatusFailed:
		return ":x: failed"
	case pipeline.StatusCancelled:
		return ":no_entry_sign: cancelled"
	case pipeline.StatusStarting, "":
		return ":hourglass_flowing_sand: starting"
	}
	return Escape(string(s))
}

// stageInfo names a step for people and says how far along it is.
func stageInfo(s pipeline.Step) (string, float64) {
	switch s {
	case pipeline.StepPlan, "":
		return "Planning", 0.05
	case pipeline.StepSearch:
		return "Searching", 0.2
	case pipeline.StepRank:
		return "Ranking sources", 0.35
	case pipeline.StepFetch:
		return "Reading pages", 0.5
	case pipeline.StepAnalyze:
		return "Analysing", 0.65
	case pipeline.StepWrite:
		return "Writing", 0.75
	case pipeline.StepReview:
		return "Reviewing the draft", 0.85
	case pipeline.StepOutput:
		return "Publishing", 0.95
	case pipeline.StepFallback:
		return "Writing a partial report", 0.95
	case pipeline.StepDone:
		return "Done", 1
	}
	return Escape(string(s)), 0.5
}

// elapsed is how long a run has been going (or went).
func elapsed(r *pipeline.Run, now time.Time) time.Duration {
	end := now
	if !r.FinishedAt.IsZero() {
		end = r.FinishedAt
	}
	if r.CreatedAt.IsZero() {
		return r.Active
	}
	return end.Sub(r.CreatedAt)
}

// RenderProgress renders the one progress message of a run: stage, counts,
// a text progress bar, its steering notes, elapsed time and spend.
func RenderProgress(r *pipeline.Run, now time.Time) []slack.Block {
	stage, frac := stageInfo(r.Step)
	switch {
	case r.Status.Final():
		stage, frac = StatusText(r.Status), 1
	case r.Status == pipeline.StatusWaiting:
		label := "a checkpoint"
		if cur := r.Current(); cur != nil {
			label = "“" + EscapeTruncate(OneLine(FirstNonEmpty(cur.Label, cur.DefinitionID)), 80) + "”"
		}
		stage = stage + " — waiting for your decision on " + label + " below"
	}
	fetched := 0
	for _, s := range r.Sources {
		if s.Fetched {
			fetched++
		}
	}
	pages := len(r.Pages)
	pages = cmp.Or(pages, fetched)
	text := fmt.Sprintf("*Progress* · run %s\n*%s*\n`%s`", RunRef(r.ID), stage, progressBar(frac, 20))
	counts := fmt.Sprintf("Queries *%s* · Sources *%s* · Pages read *%s*", Count(len(r.Queries)), Count(len(r.Sources)), Count(pages))
	if r.Counters.Iteration > 0 {
		counts += fmt.Sprintf(" · Revisions *%d*", r.Counters.Iteration)
	}
	foot := fmt.Sprintf("Elapsed %s · working %s · spend %s", Duration(elapsed(r, now)), Duration(r.Active), money(r.Spend.CostUSD))
	if r.Limits.MaxCostUSD > 0 {
		foot += " of " + money(r.Limits.MaxCostUSD)
	}
	if n := len(r.Errors); n > 0 {
		foot += fmt.Sprintf(" · %d recoverable errors", n)
	}
	blocks := []slack.Block{Section(text), ContextText(counts)}
	if line := steeringLine(r); line != "" {
		blocks = append(blocks, ContextText(line))
	}
	return append(blocks, ContextText(foot))
}

// ProgressText is the notification text of the progress message.
func ProgressText(r *pipeline.Run) string {
	stage, _ := stageInfo(r.Step)
	return "Research progress: " + stage
}

// RenderFinished renders what a finished run posts in its thread: the
// report summary, or the failure or cancellation.
func RenderFinished(r *pipeline.Run) []slack.Block {
	switch {
	case r.Status == pipeline.StatusCancelled:
		return []slack.Block{Section(fmt.Sprintf(":no_entry_sign: Run %s was cancelled. Nothing more will happen in this thread; start again with `/research &lt;question&gt;`.", RunRef(r.ID)))}
	case r.Report == nil || r.Status == pipeline.StatusFailed:
		reason := FirstNonEmpty(r.Failure, "an unexpected error")
		return []slack.Block{
			Section(fmt.Sprintf(":x: Run %s failed: %s", RunRef(r.ID), EscapeTruncate(OneLine(reason), 1500))),
			ContextText("What to do: try again with `/research &lt;question&gt;`, perhaps with `--depth quick`. If it keeps failing, tell whoever runs researchbot and give them the run id."),
		}
	}
	return RenderReport(r.Report, r.Bounds)
}

// RenderReport renders a report summary within Block Kit limits: title,
// abstract, numbered citations linking to the pages read and the caveats of
// a partial report. The full report is attached separately.
func RenderReport(rep *pipeline.Report, bounds []string) []slack.Block {
	blocks := []slack.Block{header(FirstNonEmpty(OneLine(rep.Title), "Research report"))}
	meta := []string{}
	if rep.Status == "partial" {
		meta = append(meta, ":large_yellow_circle: *partial report*")
	} else {
		meta = append(meta, ":white_check_mark: complete")
	}
	if rep.Confidence != "" {
		meta = append(meta, "confidence "+Escape(Truncate(rep.Confidence, 20)))
	}
	m := rep.Metadata
	meta = append(meta, Count(m.SourcesUsed)+" sources", Count(m.WordCount)+" words")
	if m.FinalScore > 0 {
		meta = append(meta, fmt.Sprintf("score %.1f/10", m.FinalScore))
	}
	meta = append(meta, "cost "+money(m.CostUSD), "run "+RunRef(m.RunID))
	blocks = append(blocks, ContextText(strings.Join(meta, " · ")))
	if rep.NothingNew {
		blocks = append(blocks, Section("Nothing new since the previous report."))
	}
	links := reportLinks(rep)
	md := NewMarkdownBudget() // the summary first, then the conclusion
	if a := strings.TrimSpace(rep.Abstract); a != "" {
		blocks = append(blocks, md.Block("", a, links, 2800))
	}
	var highlights []string
	for _, sec := range rep.Sections {
		line := "• *" + EscapeTruncate(OneLine(FirstNonEmpty(sec.Title, "Section")), 100) + "*"
		if c := strings.TrimSpace(sec.Content); c != "" {
			line += " — " + MarkdownLine(c, links, 300)
		}
		highlights = append(highlights, line)
	}
	if len(highlights) > 0 {
		blocks = append(blocks, packLines("*Highlights*\n", highlights, 3, func(left int) string {
			return fmt.Sprintf("_…and %d more sections in the attached report._", left)
		})...)
	}
	if c := strings.TrimSpace(rep.Conclusion); c != "" {
		blocks = append(blocks, md.Block("Conclusion", c, links, 1500))
	}
	var caveats []string
	if rep.Reason != "" {
		caveats = append(caveats, "• "+EscapeTruncate(OneLine(rep.Reason), 500))
	}
	for _, c := range append(append([]string{}, rep.Caveats...), bounds...) {
		caveats = append(caveats, "• "+MarkdownLine(c, links, 400))
	}
	if w := rep.Provenance.Withheld; w != "" {
		// Sources this channel's readers could not all read: said, never named.
		caveats = append(caveats, "• :lock: "+EscapeTruncate(OneLine(w), 400))
	}
	if len(caveats) > 0 {
		blocks = append(blocks, packLines("*Caveats*\n", caveats, 2, func(left int) string {
			return fmt.Sprintf("_…and %d more in the attached report._", left)
		})...)
	}
	var refs []string
	for i, ref := range rep.References {
		if i == maxReferenceLines {
			break
		}
		line := fmt.Sprintf("[%d] %s", ref.N, mdLink(ref.URL, FirstNonEmpty(ref.Title, ref.URL), 120))
		// A workspace message reads "[3] #infra — @dana · 2026-03-02": its
		// link is the message, its domain says nothing.
		if ref.File && isUserID(ref.SharedBy) {
			line += " — shared by <@" + ref.SharedBy + ">"
		} else if d := FirstNonEmpty(ref.Domain, domainOf(ref.URL)); d != "" && ref.Kind != pipeline.KindWorkspace {
			line += " — " + Escape(Truncate(d, 60))
		}
		if k := ref.KindText(); k != "" {
			line += " · " + k
		}
		if !ref.Published.IsZero() {
			line += " · " + ref.Published.UTC().Format("2006-01-02")
		}
		refs = append(refs, line)
	}
	if len(refs) > 0 {
		blocks = append(blocks, packLines("*Sources*\n", refs, 4, func(left int) string {
			return fmt.Sprintf("_…and %d more in the attached report._", left)
		})...)
	}
	if n := len(rep.References) - maxReferenceLines; n > 0 {
		blocks = append(blocks, ContextText(fmt.Sprintf("…and %d more sources in the attached report.", n)))
	}
	blocks = append(blocks, ContextText(":page_facing_up: The full report is attached below as a Markdown file."))
	if id := rep.Metadata.RunID; id != "" {
		blocks = append(blocks, feedbackBlock(id, ""))
		return limitBlocks(blocks, MaxBlocks, 2, "…more in the attached report.")
	}
	return limitBlocks(blocks, MaxBlocks, 1, "…more in the attached report.")
}

// reportLinks is the set of pages a report may link to: its references,
// each a page the run fetched.
func reportLinks(rep *pipeline.Report) SourceLinks {
	urls := make([]string, 0, len(rep.References))
	for _, ref := range rep.References {
		urls = append(urls, ref.URL)
	}
	return sourceLinks(urls...)
}

// ReportText is the notification text of the report message.
func ReportText(r *pipeline.Run) string {
	if r.Report == nil {
		return "Research " + string(r.Status)
	}
	return "Research report: " + EscapeTruncate(OneLine(r.Report.Title), 200)
}

// RenderHelp explains everything /research does.
func RenderHelp() []slack.Block {
	return []slack.Block{
		header("researchbot — research assistant"),
		Section("*Start research*\n`/research &lt;question&gt;` — I plan, search many sources, read the pages, write a report with citations to the pages I read, review it, and post it in a thread under your request.\nOptions go before or after the question:\n• `--mode guided` (default): you approve the plan and the draft, and decide what to do when the reviewer finds critical issues\n• `--mode full`: all of guided, and you also choose the sources before they are read\n• `--mode auto`: no questions, straight to the report\n• `--depth quick|standard|comprehensive`: how many sources and rounds"),
		Section("*Checkpoints*\nIn the thread I ask you to *Approve*, *Edit* (a form, pre-filled) or *Reject* (with a reason). Only you and this channel's approvers can decide. If nobody decides in time I post a reminder — silence is never taken as a rejection."),
		Section("*Ask in the thread*\nMention me in a report's thread with a question (_@researchbot what did [3] say about costs?_): I answer there from that run's sources only, each citation checked against the page. When they don't answer it, I say so and offer *Research this*: a new run with this one as background."),
		Section("*Other commands*\n• `/research status [RUN]` — where a run stands (your latest by default)\n• `/research list` — your recent runs\n• `/research cancel [RUN]` — stop a run at its next step (asks to confirm)\n• `/research stream new|list|show|edit|pause|resume|run|delete|policy` — research streams: a digest of what's new, on a schedule (`/research stream help`)\n• `/research help` — this message\nOnly these exact forms are commands; anything else is a question. `--` makes even an exact form a question: `/research -- stream list`"),
		ContextText("I can only work in channels I'm in: invite me with `/invite @researchbot`. Reports arrive as a summary in the thread plus the full Markdown file."),
	}
}

// RenderStatus describes one run for its requester.
func RenderStatus(r *pipeline.Run, now time.Time) []slack.Block {
	q := EscapeTruncate(OneLine(r.Question), 500)
	text := fmt.Sprintf("*Run* %s · %s\n>%s", RunRef(r.ID), StatusText(r.ShownStatus()), q)
	blocks := []slack.Block{Section(text)}
	blocks = append(blocks, RenderProgress(r, now)[1:]...)
	if cur := r.Current(); cur != nil {
		blocks = append(blocks, ContextText("Waiting for a decision on *"+EscapeTruncate(OneLine(FirstNonEmpty(cur.Label, cur.DefinitionID)), 80)+"* in the run's thread."))
	}
	if r.Status == pipeline.StatusFailed && r.Failure != "" {
		blocks = append(blocks, ContextText("Failure: "+EscapeTruncate(OneLine(r.Failure), 500)))
	}
	return append(blocks, renderFollowUps(r)...)
}

// RenderList lists runs, newest first.
func RenderList(runs []*pipeline.Run, now time.Time) []slack.Block {
	if len(runs) == 0 {
		return []slack.Block{Section("You have no research runs yet. Start one with `/research &lt;question&gt;`.")}
	}
	lines := make([]string, 0, len(runs))
	for _, r := range runs {
		age := "just now"
		if !r.CreatedAt.IsZero() {
			age = Duration(now.Sub(r.CreatedAt)) + " ago"
		}
		lines = append(lines, fmt.Sprintf("%s %s — %s · %s", RunRef(r.ID), StatusText(r.ShownStatus()), EscapeTruncate(OneLine(r.Question), 150), age))
	}
	blocks := []slack.Block{Section("*Your recent research runs*")}
	blocks = append(blocks, packLines("", lines, 10, func(left int) string { return fmt.Sprintf("_…and %d more._", left) })...)
	return append(blocks, ContextText("`/research status RUN` shows one run; `/research cancel RUN` stops one."))
}

// RenderError renders an error for people: what went wrong and what to do.
// Both texts are mrkdwn written by this package (escape untrusted parts).
func RenderError(what, todo string) []slack.Block {
	blocks := []slack.Block{Section(":warning: " + CutRunes(what, MaxSectionText-20))}
	if todo != "" {
		blocks = append(blocks, ContextText(todo))
	}
	return blocks
}

// RenderNotCurrent answers a click on a checkpoint of run runID that is
// no longer the one the run waits on.
func RenderNotCurrent(runID string) []slack.Block {
	return RenderError("This checkpoint is no longer current: the run has moved on and a newer message in the thread asks for the decision.", "Nothing was changed; use the latest message in run "+RunRef(runID)+"'s thread.")
}

// RenderRunNotFound answers a lookup of run runID that found none (the
// person's runs when runID is "").
func RenderRunNotFound(runID string) []slack.Block {
	if runID == "" {
		return RenderError("You have no research runs.", "Start one with `/research &lt;question&gt;`.")
	}
	return RenderError("I can't find run "+RunRef(runID)+".", "`/research list` shows your runs. To research a question that starts with this word, write `/research -- your question`.")
}

// RenderInviteHelp tells a user how to let the bot into channelID, where it
// could not post (a direct message, "D…", cannot take an invitation).
func RenderInviteHelp(channelID string) []slack.Block {
	what := "I'm not a member of this channel, so I can't post the research thread here."
	todo := "Invite me with `/invite @researchbot` and run the command again."
	if strings.HasPrefix(channelID, "D") {
		what = "I can't post in this conversation."
		todo = "Open researchbot's *Messages* tab and use `/research` there, or run it in a channel I'm in (invite me with `/invite @researchbot`)."
	}
	return RenderError(what, todo)
}

// RenderCancelConfirm asks the requester to confirm cancelling a run.
func RenderCancelConfirm(r *pipeline.Run) []slack.Block {
	return []slack.Block{
		Section(fmt.Sprintf("Cancel run %s?\n>%s\nIt stops at its next step boundary; what it found so far is kept.", RunRef(r.ID), EscapeTruncate(OneLine(r.Question), 500))),
		slack.NewActionBlock("cancel_actions",
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionCancelConfirm, Value: r.ID, Text: Plain("Yes, cancel it", MaxButtonText), Style: slack.StyleDanger},
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionCancelAbort, Value: r.ID, Text: Plain("Keep it running", MaxButtonText)},
		),
	}
}
