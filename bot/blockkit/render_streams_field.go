package blockkit

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/scheduler"
)

// CallbackStreamField is the callback id of the form that edits one field
// of a stream's review (the Edit button beside it); StreamFieldBlock is its
// input's block id, the input's action id is StartInput.
const (
	CallbackStreamField = "st_field_form"
	StreamFieldBlock    = "st_field_value"
)

// RenderStreamFieldModal is the form that edits field f of a review inline:
// one input holding value (a list one item per line), its label, and a
// hint saying what it takes. meta is the form's private_metadata (where
// the conversation is).
func RenderStreamFieldModal(f scheduler.SpecField, value, meta string) slack.ModalViewRequest {
	in := slack.NewPlainTextInputBlockElement(Plain(f.Label(), MaxPlaceholder), StartInput)
	in.Multiline = f.IsList() || f == scheduler.FieldPurpose || f == scheduler.FieldExpectedOutcomes
	in.MaxLength = MaxInputLength
	in.InitialValue = CutRunes(value, MaxInputLength)
	var hint []string
	switch {
	case f.IsList():
		hint = append(hint, "One item per line.")
	case len(scheduler.FieldChoices(f)) > 0:
		hint = append(hint, "One of: "+strings.Join(scheduler.FieldChoices(f), ", ")+".")
	}
	if f.Optional() {
		hint = append(hint, "Optional: leave it empty to clear it (or keep its default).")
	}
	hint = append(hint, "It is checked like an answer in the conversation; the review then shows it.")
	block := slack.NewInputBlock(StreamFieldBlock, Plain(f.Label(), MaxInputLabel), Plain(strings.Join(hint, " "), MaxInputLabel), in)
	block.Optional = f.Optional()
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackStreamField,
		Title:           Plain("Edit "+f.Label(), MaxModalTitle),
		Submit:          Plain("Save", MaxModalTitle),
		Close:           Plain("Cancel", MaxModalTitle),
		PrivateMetadata: meta,
		Blocks:          slack.Blocks{BlockSet: []slack.Block{block}},
	}
}
