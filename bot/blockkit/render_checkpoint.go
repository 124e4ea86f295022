package blockkit

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Action ids of the buttons this package renders. A checkpoint button's
// value is only the opaque checkpoint instance id.
const (
	ActionApprove       = "cp_approve"
	ActionEdit          = "cp_edit"
	ActionReject        = "cp_reject"
	ActionCancelConfirm = "run_cancel_confirm"
	ActionCancelAbort   = "run_cancel_abort"
)

// actionIDs maps a checkpoint action to its button's action_id.
var actionIDs = map[checkpoints.Action]string{
	checkpoints.Approve: ActionApprove,
	checkpoints.Edit:    ActionEdit,
	checkpoints.Reject:  ActionReject,
}

// ActionOf returns the checkpoint action a button's action_id encodes.
func ActionOf(actionID string) (checkpoints.Action, bool) {
	for a, id := range actionIDs {
		if id == actionID {
			return a, true
		}
	}
	return "", false
}

// RenderCheckpoint renders a checkpoint message: what the person must judge,
// read from inst.Payload by ControlType, and a button for each of
// inst.Actions. Attempt > 1 renders the reminder variant. requestedBy is the
// run's requester (a Slack user id), named as the person who may decide.
// The time left to its deadline is counted from its offer
// (RenderCheckpointAt counts it from another moment).
func RenderCheckpoint(inst *checkpoints.Instance, requestedBy string) []slack.Block {
	return RenderCheckpointAt(inst, requestedBy, inst.OfferedAt)
}

// RenderCheckpointAt is RenderCheckpoint rendered at now: the time left to
// the checkpoint's deadline ("in 3 h 20 min") is counted from now, beside
// the deadline itself in the reader's time zone.
func RenderCheckpointAt(inst *checkpoints.Instance, requestedBy string, now time.Time) []slack.Block {
	var blocks []slack.Block
	blocks = append(blocks, header(checkpointTitle(inst)))
	if inst.Attempt > 1 {
		blocks = append(blocks, ContextText(fmt.Sprintf(":alarm_clock: *Reminder* — this is still waiting for a decision (offer %d). Nothing has been rejected; the run continues once someone decides.", inst.Attempt)))
	}
	body := checkpointBody(inst)
	tail := append(neverDomainBlocks(inst), checkpointTail(inst, requestedBy, now)...)
	room := MaxBlocks - len(blocks) - len(tail)
	if len(body) > room {
		body = append(body[:room-1], ContextText("_…more than fits in one message; the full text is in the Edit form._"))
	}
	blocks = append(blocks, body...)
	return append(blocks, tail...)
}

// checkpointTitle is the header of a checkpoint message.
func checkpointTitle(inst *checkpoints.Instance) string {
	if inst.ControlType == checkpoints.Clarify {
		return clarifyTitle
	}
	label := inst.Label
	if label == "" {
		label = strings.ReplaceAll(inst.DefinitionID, "_", " ")
	}
	icon := map[string]string{
		checkpoints.PlanReview:     "🧭 ",
		checkpoints.SourceReview:   "📚 ",
		checkpoints.DraftReview:    "📝 ",
		checkpoints.CriticalIssues: "⚠️ ",
	}[inst.ControlType]
	return icon + label + " — your decision"
}

// checkpointTail is the buttons and the line saying who may decide.
func checkpointTail(inst *checkpoints.Instance, requestedBy string, now time.Time) []slack.Block {
	var tail []slack.Block
	if b := checkpointButtons(inst, "cp_actions"); b != nil {
		tail = append(tail, b)
	}
	note := "Only the person who started this run and this channel's approvers can decide."
	if isUserID(requestedBy) {
		note = fmt.Sprintf("Waiting for <@%s> (or an approver of this channel).", requestedBy)
	}
	switch {
	case !inst.RemindersStoppedAt.IsZero():
		note += " " + RemindersStoppedNote(inst)
	case !inst.DeadlineAt.IsZero() && inst.ControlType == checkpoints.Clarify:
		note += clarifyDeadlineNote(inst, now)
	case !inst.DeadlineAt.IsZero():
		note += " " + DeadlineNote(inst, now)
	}
	return append(tail, ContextText(note))
}

// DeadlineNote says when inst's deadline comes and what happens then, with
// the time left as of now: "Reminder due in 3 h 20 min (<date>)." or
// ":hourglass: This checkpoint *approves itself in 3 h 20 min* (<date>) if
// nobody decides."; a deadline already passed says so. The time left is
// true when the message is rendered; each reminder renders it again.
func DeadlineNote(inst *checkpoints.Instance, now time.Time) string {
	left, ok := checkpoints.TimeLeft(inst.DeadlineAt, now)
	at := SlackDate(inst.DeadlineAt)
	switch {
	case inst.OnTimeout == checkpoints.TimeoutApprove && ok:
		return ":hourglass: This checkpoint *approves itself in " + left + "* (" + at + ") if nobody decides."
	case inst.OnTimeout == checkpoints.TimeoutApprove:
		return ":hourglass: Its deadline (" + at + ") has passed: this checkpoint *approves itself* any moment now if nobody decides."
	case ok:
		return "Reminder due in " + left + " (" + at + ")."
	}
	return "Reminder was due " + at + "."
}

// checkpointButtons are a checkpoint's decision buttons, and Skip when it is
// optional, in an actions block with blockID; nil when there are none. The
// thread message and the App Home show the same buttons.
func checkpointButtons(inst *checkpoints.Instance, blockID string) *slack.ActionBlock {
	var buttons []slack.BlockElement
	for _, a := range inst.Actions {
		id, ok := actionIDs[a]
		if !ok {
			continue
		}
		b := slack.NewButtonBlockElement(id, inst.ID, Plain(buttonLabel(inst, a), MaxButtonText))
		switch a {
		case checkpoints.Approve:
			b.Style = slack.StylePrimary
		case checkpoints.Reject:
			b.Style = slack.StyleDanger
		}
		buttons = append(buttons, b)
	}
	if !inst.Required {
		buttons = append(buttons, slack.NewButtonBlockElement(ActionSkip, inst.ID, Plain("Skip", MaxButtonText)))
	} else if !inst.RemindersStoppedAt.IsZero() && inst.State == checkpoints.StateTimedOut {
		// Nobody decided it through its reminders: an admin may go on without it.
		without := slack.NewButtonBlockElement(ActionContinueWithout, inst.ID, Plain("Continue without it", MaxButtonText))
		without.Style = slack.StyleDanger
		buttons = append(buttons, without)
	}
	if len(buttons) == 0 {
		return nil
	}
	return slack.NewActionBlock(blockID, buttons...)
}

// checkpointBody renders the payload by control type.
func checkpointBody(inst *checkpoints.Instance) []slack.Block {
	switch inst.ControlType {
	case checkpoints.PlanReview:
		var p pipeline.PlanPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			return planBody(p)
		}
	case checkpoints.SourceReview:
		var p pipeline.SourcesPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			return sourcesBody(p)
		}
	case checkpoints.DraftReview:
		var p pipeline.DraftPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			return draftBody(p)
		}
	case checkpoints.CriticalIssues:
		var p pipeline.CriticalPayload
		if json.Unmarshal(inst.Payload, &p) == nil {
			return criticalBody(p)
		}
	case checkpoints.Clarify:
		if p, ok := clarifyPayloadOf(inst); ok {
			return clarifyBody(p)
		}
	}
	return valuesBody(inst)
}

// planBody shows the plan: numbered sub-questions and queries, the
// sections, the method, warnings and the estimate.
func planBody(p pipeline.PlanPayload) []slack.Block {
	var blocks []slack.Block
	intro := "*Question:* " + EscapeTruncate(OneLine(p.Question), 1500)
	if p.Round > 1 {
		intro += fmt.Sprintf("\n_Revised plan (round %d)._", p.Round)
	}
	blocks = append(blocks, Section(intro))
	lines := make([]string, 0, len(p.SubQuestions))
	for i, q := range p.SubQuestions {
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, EscapeTruncate(OneLine(q), 400)))
	}
	blocks = append(blocks, packLines("*Sub-questions*\n", lines, 4, moreInEdit)...)
	lines = lines[:0]
	for i, q := range p.Queries {
		kind := q.Kind
		if kind == "" {
			kind = "web"
		}
		lines = append(lines, fmt.Sprintf("%d. `%s` %s", i+1, Escape(Truncate(OneLine(kind), 12)), EscapeTruncate(OneLine(q.Text), 300)))
	}
	if len(lines) > 0 {
		blocks = append(blocks, packLines("*Search queries*\n", lines, 4, moreInEdit)...)
	}
	var more []string
	if len(p.Sections) > 0 {
		s := make([]string, 0, len(p.Sections))
		for _, t := range p.Sections {
			s = append(s, EscapeTruncate(OneLine(t), 100))
		}
		more = append(more, "*Report sections:* "+strings.Join(s, " · "))
	}
	if p.Methodology != "" {
		more = append(more, "*Method:* "+EscapeTruncate(OneLine(p.Methodology), 800))
	}
	if p.Domains != "" {
		more = append(more, "*Sources:* "+EscapeTruncate(OneLine(p.Domains), 1200))
	}
	if f := pipeline.FilesAttached(p.Files); f != "" {
		more = append(more, "*Files:* "+Escape(f))
	}
	if a := assumptionsLine(p.Assumptions); a != "" {
		more = append(more, a)
	}
	if len(more) > 0 {
		blocks = append(blocks, Section(CutRunes(strings.Join(more, "\n"), SectionBudget)))
	}
	for i, w := range p.Warnings {
		if i == 3 {
			blocks = append(blocks, ContextText(fmt.Sprintf(":warning: …and %d more warnings", len(p.Warnings)-3)))
			break
		}
		blocks = append(blocks, ContextText(":warning: "+EscapeTruncate(OneLine(w), 500)))
	}
	blocks = append(blocks, ContextText(estimateLine(p.Estimate)))
	return blocks
}

// estimateLine is the cost and time estimate of a plan.
func estimateLine(e pipeline.Estimate) string {
	parts := []string{"*Estimate:* ~" + money(e.CostUSD), "~" + Duration(e.Duration)}
	if e.Searches > 0 {
		parts = append(parts, Count(e.Searches)+" searches")
	}
	if e.PagesToRead > 0 {
		parts = append(parts, Count(e.PagesToRead)+" pages to read")
	}
	if e.LLMCalls > 0 {
		parts = append(parts, Count(e.LLMCalls)+" model calls")
	}
	if e.Tokens > 0 {
		parts = append(parts, "~"+Count(e.Tokens)+" tokens")
	}
	return strings.Join(parts, " · ")
}

// moreInEdit names what was left out of a list.
func moreInEdit(left int) string {
	return fmt.Sprintf("_…and %d more — the full list is in the Edit form._", left)
}

// sourcesBody shows the ranked sources.
func sourcesBody(p pipeline.SourcesPayload) []slack.Block {
	intro := fmt.Sprintf("*Question:* %s\nI found *%s* sources; these are the best %s. The top %s will be read unless you change the selection.",
		EscapeTruncate(OneLine(p.Question), 1000), Count(p.Total), Count(len(p.Sources)), Count(p.ToFetch))
	blocks := []slack.Block{Section(intro)}
	var lines []string
	for i, s := range p.Sources {
		if i == maxListedSources {
			break
		}
		mark := ""
		if s.Relevant {
			mark = " :star:"
		}
		meta := []string{Escape(Truncate(FirstNonEmpty(s.Domain, domainOf(s.URL)), 80))}
		if !s.Published.IsZero() {
			meta = append(meta, s.Published.UTC().Format("2006-01-02"))
		}
		if s.Kind != "" {
			meta = append(meta, Escape(Truncate(s.Kind, 20)))
		}
		meta = append(meta, fmt.Sprintf("score %.2f", s.Score))
		line := fmt.Sprintf("*%d.* %s%s\n      %s", i+1, mdLink(s.URL, FirstNonEmpty(s.Title, s.URL), 150), mark, strings.Join(meta, " · "))
		if g := OneLine(s.Gist); g != "" {
			line += "\n      _" + EscapeTruncate(g, 200) + "_"
		}
		lines = append(lines, line)
	}
	blocks = append(blocks, packLines("", lines, 8, moreInEdit)...)
	if n := len(p.Sources) - maxListedSources; n > 0 {
		blocks = append(blocks, ContextText(fmt.Sprintf("…and %d more ranked sources — choose among all of them in the Edit form.", n)))
	}
	if len(p.Errors) > 0 {
		errs := make([]string, 0, len(p.Errors))
		for _, e := range p.Errors {
			errs = append(errs, EscapeTruncate(OneLine(e), 200))
		}
		blocks = append(blocks, ContextText(":warning: Some searches failed: "+strings.Join(errs, "; ")))
	}
	return blocks
}

// draftBody shows the draft summary and the reviewer's verdict.
func draftBody(p pipeline.DraftPayload) []slack.Block {
	blocks := []slack.Block{Section(fmt.Sprintf("*%s*\n_Draft %d_ · %s words · %s sources",
		EscapeTruncate(OneLine(FirstNonEmpty(p.Title, "Untitled draft")), 300), p.Version, Count(p.WordCount), Count(p.Sources)))}
	md := NewMarkdownBudget() // the draft's summary first, then the reviewer's
	if a := strings.TrimSpace(p.Abstract); a != "" {
		blocks = append(blocks, md.Block("Summary", a, nil, 2000))
	}
	if len(p.Sections) > 0 {
		s := make([]string, 0, len(p.Sections))
		for i, t := range p.Sections {
			s = append(s, fmt.Sprintf("%d. %s", i+1, MarkdownLine(t, nil, 150)))
		}
		blocks = append(blocks, packLines("*Sections*\n", s, 2, moreInEdit)...)
	}
	if p.NotPassed {
		blocks = append(blocks, Section(fmt.Sprintf(":warning: *The reviewer did not pass this draft* (score %.1f/10, recommends _%s_). It is yours to judge: *%s* (the report will say the reviewer did not pass it), *%s* (say what to change), or *%s* (a partial report).",
			p.Score, Escape(Truncate(p.Recommendation, 30)), pipeline.ChoicePublishCaveat, pipeline.ChoiceReviseMine, pipeline.ChoiceStop)))
		if p.AtRevisionLimit {
			blocks = append(blocks, ContextText("The revision limit is reached: changes asked for now end the run with a partial report that says so."))
		}
	}
	verdict := fmt.Sprintf("*Reviewer:* score *%.1f*/10", p.Score)
	if p.Recommendation != "" {
		verdict += " · recommends _" + Escape(Truncate(p.Recommendation, 30)) + "_"
	}
	verdict += fmt.Sprintf(" · %d major, %d minor issues", p.Major, p.Minor)
	blocks = append(blocks, Section(verdict))
	if s := strings.TrimSpace(p.Summary); s != "" {
		blocks = append(blocks, md.Block("", s, nil, 1500))
	}
	blocks = append(blocks, evidenceBlocks(p.Claims)...)
	if p.Diff != nil {
		blocks = append(blocks, Section(fmt.Sprintf("*Changes from draft %d:* %s", p.Diff.From, EscapeTruncate(p.Diff.Summary(), 1500))))
	}
	blocks = append(blocks, disagreementBlocks(p.Disagreements)...)
	if line := pipeline.CoverageSummary(p.Coverage); line != "" {
		blocks = append(blocks, ContextText(CutRunes(Escape(line), MaxContextText)))
	}
	if p.Evidence != "" {
		blocks = append(blocks, ContextText("*Evidence behind the key findings:* "+EscapeTruncate(p.Evidence, 300)))
	}
	if p.Markdown != "" {
		blocks = append(blocks, ContextText("The whole draft is attached to this thread as a Markdown file; the final report will be attached the same way."))
	}
	return blocks
}

// evidenceBlocks shows how the draft's claims fared when their quotes were
// checked against the sources, and lists the unsupported ones.
func evidenceBlocks(c pipeline.ClaimSummary) []slack.Block {
	if !c.Checked {
		return nil
	}
	head := "*Evidence:* " + Escape(c.ClaimTally.String())
	if c.Total > 0 && c.ClaimTally.Unsupported == 0 {
		head += " — every cited claim's quote was found in its source"
	}
	lines := make([]string, 0, len(c.Unsupported))
	for _, u := range c.Unsupported {
		line := fmt.Sprintf(":warning: _%s_ — “%s”", EscapeTruncate(OneLine(u.Location), 80), MarkdownLine(u.Sentence, nil, 300))
		for _, s := range append([]pipeline.ClaimView{u}, u.Also...) {
			line += fmt.Sprintf("\n      cites %s: %s", EscapeTruncate(OneLine(s.Source), 100), MarkdownLine(s.Reason, nil, 200))
		}
		lines = append(lines, line)
	}
	more := func(left int) string {
		return fmt.Sprintf("_…and %d more unsupported claims — see the draft file in this thread._", left)
	}
	blocks := packLines(head, lines, 3, more)
	if n := c.Unlisted(); n > 0 {
		blocks = append(blocks, ContextText(more(n)))
	}
	return blocks
}

// disagreementBlocks shows where the sources disagree, both sides with
// their sources, so the person can choose the reading the report takes.
func disagreementBlocks(ds []pipeline.DisagreementView) []slack.Block {
	if len(ds) == 0 {
		return nil
	}
	side := func(label string, s pipeline.SideView, chosen bool) string {
		names := make([]string, 0, len(s.Sources))
		for _, src := range s.Sources {
			names = append(names, "_"+EscapeTruncate(OneLine(src.Title), 80)+"_")
		}
		line := fmt.Sprintf("      *%s:* %s — %s", label, MarkdownLine(s.Claim, nil, 300), strings.Join(names, ", "))
		if chosen {
			line += " :white_check_mark: chosen"
		}
		return line
	}
	lines := make([]string, 0, len(ds))
	for _, d := range ds {
		l := fmt.Sprintf("*%d. %s*\n%s\n%s", d.N, EscapeTruncate(OneLine(FirstNonEmpty(d.Topic, "Disagreement")), 150),
			side("A", d.A, d.Chosen == pipeline.ReadingA), side("B", d.B, d.Chosen == pipeline.ReadingB))
		if d.Assessment != "" {
			l += "\n      _Assessment:_ " + MarkdownLine(d.Assessment, nil, 400)
		}
		lines = append(lines, l)
	}
	head := "*Where sources disagree* — choose the reading the report should take with *Edit*, or leave it to the writer:"
	return packLines(head, lines, 4, func(left int) string { return fmt.Sprintf("_…and %d more — all are in the Edit form._", left) })
}

// criticalBody shows the critical issues the reviewer found.
func criticalBody(p pipeline.CriticalPayload) []slack.Block {
	blocks := []slack.Block{Section(fmt.Sprintf("The reviewer found critical issues in draft %d, *%s* (score %.1f/10). *Revise with these issues* (with a note for the writer if you like), *publish it as it is*, or *stop* and get a report of what the run has.",
		p.Version, EscapeTruncate(OneLine(FirstNonEmpty(p.Title, "Untitled")), 300), p.Score))}
	var lines []string
	for i, it := range p.Items {
		if i == maxListedItems {
			break
		}
		line := fmt.Sprintf("%d. *%s* · %s", i+1, Escape(Truncate(it.Severity, 20)), Escape(Truncate(it.Category, 30)))
		if it.Location != "" {
			line += " · _" + EscapeTruncate(OneLine(it.Location), 100) + "_"
		}
		line += "\n      " + MarkdownLine(it.Description, nil, 500)
		if it.SuggestedFix != "" {
			line += "\n      _Fix:_ " + MarkdownLine(it.SuggestedFix, nil, 300)
		}
		lines = append(lines, line)
	}
	blocks = append(blocks, packLines("", lines, 8, func(left int) string { return fmt.Sprintf("_…and %d more issues._", left) })...)
	if n := len(p.Items) - maxListedItems; n > 0 {
		blocks = append(blocks, ContextText(fmt.Sprintf("…and %d more issues.", n)))
	}
	return blocks
}

// valuesBody shows an unknown checkpoint type by its current field values.
func valuesBody(inst *checkpoints.Instance) []slack.Block {
	var lines []string
	for _, f := range inst.Fields {
		v, ok := inst.Values[f.Key]
		if !ok {
			continue
		}
		lines = append(lines, fmt.Sprintf("*%s:* %s", EscapeTruncate(OneLine(FirstNonEmpty(f.Label, f.Key)), 100), EscapeTruncate(OneLine(valueText(v)), 500)))
	}
	if len(lines) == 0 {
		return []slack.Block{Section("Please review and decide.")}
	}
	return packLines("", lines, 6, moreInEdit)
}

// valueText renders a field value for people.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		if x == "" {
			return "—"
		}
		return x
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case float64:
		return fmt.Sprint(x)
	case []string:
		return strings.Join(x, ", ")
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, valueText(e))
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// RenderDecided renders the collapsed record of a decided (or otherwise
// closed) checkpoint: who decided what, when, and what changed. It has no
// buttons.
func RenderDecided(inst *checkpoints.Instance) []slack.Block {
	if b := clarifyDecided(inst); b != nil {
		return b
	}
	label := EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100)
	var line string
	d := inst.Decision
	switch {
	case d != nil && d.By == checkpoints.ByTimeout:
		line = fmt.Sprintf("*%s* — :hourglass: approved itself on %s: nobody decided by its deadline, and this checkpoint is set to approve itself then", label, SlackDate(d.At))
	case d != nil:
		verb := map[checkpoints.Action]string{
			checkpoints.Approve: ":white_check_mark: approved",
			checkpoints.Edit:    ":pencil2: edited and approved",
			checkpoints.Reject:  ":x: rejected",
		}[d.Action]
		if c := pipeline.Choices(inst)[d.Action]; c != "" {
			verb = ":ballot_box_with_check: chose *" + c + "*"
		}
		if verb == "" {
			verb = Escape(string(d.Action))
		}
		line = fmt.Sprintf("*%s* — %s by %s on %s", label, verb, Who(d.By), SlackDate(d.At))
		if d.Note != "" {
			what := "Note"
			if d.Action == checkpoints.Reject {
				what = "Reason"
			}
			line += fmt.Sprintf("\n>%s: %s", what, EscapeTruncate(OneLine(d.Note), 1000))
		}
	case inst.State == checkpoints.StateSkipped:
		line = fmt.Sprintf("*%s* — :fast_forward: skipped%s", label, auditNote(inst))
	case inst.State == checkpoints.StateTimedOut:
		line = fmt.Sprintf("*%s* — :hourglass: nobody decided in time; this is not a rejection", label)
	case inst.State == checkpoints.StateFailed:
		line = fmt.Sprintf("*%s* — could not be shown%s", label, auditNote(inst))
	default:
		line = fmt.Sprintf("*%s* — closed", label)
	}
	blocks := []slack.Block{Section(line)}
	if ch := decisionChanges(inst); ch != "" {
		blocks = append(blocks, ContextText(ch))
	}
	return blocks
}

// RenderEnded renders a checkpoint whose run ended (cancelled, failed, or
// finished some other way) while its message still showed buttons: the
// decision record when there is one, else a line saying no decision is
// needed any more. It has no buttons.
func RenderEnded(inst *checkpoints.Instance, status pipeline.Status) []slack.Block {
	if inst.Decision != nil || inst.Final() {
		return RenderDecided(inst)
	}
	label := EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100)
	why := "the run has ended"
	switch status {
	case pipeline.StatusCancelled:
		why = "the run was cancelled"
	case pipeline.StatusFailed:
		why = "the run failed"
	}
	return []slack.Block{Section(fmt.Sprintf("*%s* — :no_entry_sign: no decision needed any more: %s", label, why))}
}

// RenderSuperseded replaces an earlier offer of a checkpoint that was
// offered again (a reminder was posted below it).
func RenderSuperseded(inst *checkpoints.Instance) []slack.Block {
	return []slack.Block{ContextText(fmt.Sprintf("*%s* — still waiting; a reminder was posted below.", EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 100)))}
}

// auditNote is the note of the last audit entry, for people.
func auditNote(inst *checkpoints.Instance) string {
	if n := len(inst.Audit); n > 0 && inst.Audit[n-1].Note != "" {
		return ": " + EscapeTruncate(OneLine(inst.Audit[n-1].Note), 300)
	}
	return ""
}

// decisionChanges lists the fields the decision changed, from the audit.
func decisionChanges(inst *checkpoints.Instance) string {
	var changes []checkpoints.Change
	for i := len(inst.Audit) - 1; i >= 0; i-- {
		if inst.Audit[i].To == checkpoints.StateSubmitted {
			changes = inst.Audit[i].Changes
			break
		}
	}
	if len(changes) == 0 {
		return ""
	}
	labels := map[string]string{}
	for _, f := range inst.Fields {
		labels[f.Key] = FirstNonEmpty(f.Label, f.Key)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Key < changes[j].Key })
	parts := make([]string, 0, len(changes))
	for _, c := range changes {
		name := EscapeTruncate(OneLine(FirstNonEmpty(labels[c.Key], c.Key)), 60)
		before, after := OneLine(valueText(c.Before)), OneLine(valueText(c.After))
		if len(before)+len(after) > 120 {
			parts = append(parts, name+" (edited)")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s → %s", name, Escape(before), Escape(after)))
	}
	return CutRunes("*Changed:* "+strings.Join(parts, "; "), MaxContextText)
}

// FirstNonEmpty returns the first non-blank string.
func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// RemindersStoppedNote says, in a checkpoint's message, that its reminders
// are used up: who was told, that the run still waits, and how to decide or
// skip it.
func RemindersStoppedNote(inst *checkpoints.Instance) string {
	told := map[checkpoints.Escalation]string{
		checkpoints.EscalateAdmins:    " and told the admins",
		checkpoints.EscalateRequester: " and told the person who started the run",
	}[inst.ReminderPolicy().Escalate]
	return fmt.Sprintf(":no_bell: *Reminders have stopped* after %d%s. The run is still waiting: decide with the buttons above, or an admin can go on without it (*Continue without it*, here or in my App Home, or `researchbot checkpoints skip %s %s`).",
		inst.Reminded, told, Escape(inst.RunID), Escape(inst.ID))
}
