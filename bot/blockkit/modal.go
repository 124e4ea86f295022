package blockkit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// NoticeModal replaces a form with an explanation (blocks) and a Close
// button.
func NoticeModal(blocks []slack.Block) *slack.ModalViewRequest {
	return &slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  Plain("researchbot", MaxModalTitle),
		Close:  Plain("Close", MaxModalTitle),
		Blocks: slack.Blocks{BlockSet: blocks},
	}
}

// Callback ids of the modals this package renders. A modal's
// private_metadata is the checkpoint instance id.
const (
	CallbackEdit   = "checkpoint_edit"
	CallbackReject = "checkpoint_reject"
)

// ReasonBlockID is the block id of the Reject modal's reason.
const ReasonBlockID = "reason"

// EditModal renders the Edit form of a checkpoint from inst.Fields, pre-filled
// from inst.Values (or each field's Default). Each field is an input block
// whose block_id is the field key, so field errors map back to it.
func EditModal(inst *checkpoints.Instance) slack.ModalViewRequest {
	var blocks []slack.Block
	blocks = append(blocks, ContextText("Change what you want and press *Save*; the run continues with your version."))
	blocks = append(blocks, modalPayload(inst)...)
	fields := slices.Clone(inst.Fields)
	for i := range fields {
		if fields[i].MaxLength <= 0 {
			fields[i].MaxLength = checkpoints.MaxTextLength // a checkpoint's text is limited even when its field sets no limit
		}
	}
	blocks = append(blocks, inputs(fields, inst.Values)...)
	blocks = blocks[:min(len(blocks), MaxModalBlocks)]
	title, submit := "Edit: "+FirstNonEmpty(inst.Label, "checkpoint"), "Save"
	if inst.ControlType == checkpoints.Clarify {
		blocks[0] = ContextText(clarifyModalIntro)
		title, submit = clarifyModalTitle, clarifyModalSubmit
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           Plain(title, MaxModalTitle),
		Submit:          Plain(submit, MaxModalTitle),
		Close:           Plain("Cancel", MaxModalTitle),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: inst.ID,
		CallbackID:      CallbackEdit,
		NotifyOnClose:   true,
	}
}

// modalPayload is the read-only text an Edit form shows above its inputs:
// the whole draft for a draft review (split into sections).
func modalPayload(inst *checkpoints.Instance) []slack.Block {
	if inst.ControlType != checkpoints.DraftReview {
		return nil
	}
	var p pipeline.DraftPayload
	if json.Unmarshal(inst.Payload, &p) != nil || strings.TrimSpace(p.Markdown) == "" {
		return nil
	}
	var blocks []slack.Block
	rest := []rune(Escape(p.Markdown))
	const per = 2900
	for len(rest) > 0 && len(blocks) < 40 {
		n := min(per, len(rest))
		chunk := string(rest[:n])
		if n < len(rest) {
			// Never split an entity.
			if i := strings.LastIndex(chunk, "&"); i >= 0 && !strings.Contains(chunk[i:], ";") {
				chunk = chunk[:i]
			}
		}
		rest = rest[len([]rune(chunk)):]
		blocks = append(blocks, Section(chunk))
	}
	if len(rest) > 0 {
		blocks = append(blocks, ContextText("…the draft continues; the final report will be attached in full."))
	}
	blocks = append(blocks, slack.NewDividerBlock())
	return blocks
}

// SubmissionErrors maps field errors to the block ids of the Edit form, for
// a view_submission ack {"response_action":"errors"}. Errors about keys that
// are not on the form are attached to the first field.
func SubmissionErrors(fields []checkpoints.Field, errs []checkpoints.FieldError) map[string]string {
	out := map[string]string{}
	onForm := map[string]bool{}
	for _, f := range fields {
		onForm[f.Key] = true
	}
	for _, e := range errs {
		key := e.Key
		if !onForm[key] {
			if len(fields) == 0 {
				continue
			}
			key = fields[0].Key
		}
		msg := Truncate(e.Message, 150)
		if prev, ok := out[key]; ok {
			msg = Truncate(prev+"; "+msg, 150)
		}
		out[key] = msg
	}
	return out
}

// rejectReason is the Reject modal's one field.
func rejectReason() checkpoints.Field {
	return checkpoints.Field{Key: ReasonBlockID, Type: checkpoints.FieldTextarea, Label: "Why are you rejecting this?", Required: true,
		Help: "The reason goes back to the researcher, who tries again with it.", Placeholder: "What should change?", MaxLength: MaxInputLength}
}

// RejectModal asks why a checkpoint is rejected; the reason is required.
func RejectModal(inst *checkpoints.Instance) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  Plain("Reject: "+FirstNonEmpty(inst.Label, "checkpoint"), MaxModalTitle),
		Submit: Plain("Reject", MaxModalTitle),
		Close:  Plain("Cancel", MaxModalTitle),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			Section(fmt.Sprintf("You are rejecting *%s*.", EscapeTruncate(OneLine(FirstNonEmpty(inst.Label, inst.DefinitionID)), 200))),
			fieldInput(rejectReason(), nil),
		}},
		PrivateMetadata: inst.ID,
		CallbackID:      CallbackReject,
		NotifyOnClose:   true,
	}
}

// RejectReason reads the reason from a submitted Reject modal.
func RejectReason(state map[string]map[string]slack.BlockAction) string {
	return strings.TrimSpace(formValues(ParseSubmission([]checkpoints.Field{rejectReason()}, state)).raw(ReasonBlockID))
}
