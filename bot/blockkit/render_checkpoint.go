package blockkit

// A checkpoint's message while it waits for a decision: the header, the body
// for its control type, the deadline and reminder notes, and the decision
// buttons with their action ids.

import (
	"encoding/json"
	"fmt"
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
