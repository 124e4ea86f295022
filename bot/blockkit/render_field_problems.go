package blockkit

import (
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
)

// RenderFieldProblems tells a person why the changes they made in a
// checkpoint's Edit form were not saved: each field's problem, by its key.
// The form's handler (bot/decisions) shows it when the form was closed
// before its problems could be shown in it, and the bot when the engine
// refuses an edit.
func RenderFieldProblems(errs []checkpoints.FieldError) []slack.Block {
	var parts []string
	for _, fe := range errs {
		parts = append(parts, "• *"+EscapeTruncate(fe.Key, 100)+"*: "+EscapeTruncate(fe.Message, 300))
	}
	return RenderError(CutRunes("Your changes were not saved:\n"+strings.Join(parts, "\n"), MaxSectionText-40), "Click *Edit* again to fix them.")
}
