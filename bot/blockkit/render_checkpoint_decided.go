package blockkit

// A checkpoint's message once no decision is awaited: decided, ended with its
// run, or superseded by a reminder; none has buttons.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

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
