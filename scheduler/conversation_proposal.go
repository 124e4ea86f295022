package scheduler

// The model's proposal for the next turn (seed 003 §3–5, "after LLM
// call"): its shape, its validation against the conversation, and the turn
// said when it breaks the rules.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// TurnProposer proposes the bot's next turn. The real implementation calls a language model
// with [RenderPrompt] and a strict JSON schema for [Proposal]; it lives elsewhere.
type TurnProposer interface {
	Propose(ctx context.Context, c Conversation, a ConversationAction) (Proposal, error)
}

// Mode is the kind of turn the model proposes.
type Mode string

// The proposal modes (seed 003 §5).
const (
	ModeQuestion   Mode = "QUESTION"   // ask; suggestions and options are ignored
	ModeSuggestion Mode = "SUGGESTION" // offer suggestions or options for TargetField
)

// Proposal is the model's structured output: seed 003's MODE, MESSAGE, TARGET_FIELD,
// EXTRACTED_DATA, SUGGESTIONS, OPTIONS and NEXT_STEP. Every field is required and there
// are no maps, so it fits a strict JSON schema; unused fields are "" or [].
type Proposal struct {
	Mode          Mode             `json:"mode" jsonschema:"enum=QUESTION,enum=SUGGESTION"`
	Message       string           `json:"message" jsonschema_description:"the conversational message to the user"`
	TargetField   SpecField        `json:"target_field" jsonschema:"enum=,enum=purpose,enum=business_goals,enum=expected_outcomes,enum=stream_name,enum=stream_type,enum=focus_areas,enum=keywords,enum=competitors,enum=report_frequency,enum=channel,enum=time_of_day,enum=time_zone,enum=weekday,enum=month_day" jsonschema_description:"the field the suggestions or options are for; empty in QUESTION mode"`
	ExtractedData []FieldValue     `json:"extracted_data" jsonschema_description:"field values stated by the user in their message; empty if none"`
	Suggestions   []string         `json:"suggestions" jsonschema_description:"single-select choices for target_field; empty if none"`
	Options       []string         `json:"options" jsonschema_description:"multi-select choices for a list target_field; empty if none"`
	NextStep      ConversationStep `json:"next_step" jsonschema:"enum=exploration,enum=purpose,enum=business_goals,enum=expected_outcomes,enum=stream_name,enum=stream_type,enum=focus_areas,enum=keywords,enum=competitors,enum=report_frequency,enum=channel,enum=time_of_day,enum=time_zone,enum=weekday,enum=month_day,enum=review,enum=complete" jsonschema_description:"the next step, chosen from the valid next steps"`
}

// applyProposal validates p against c (the state after the user's action) and applies
// it (seed 003 §3–4, "after LLM call"). The extracted data is validated on its own:
// on error the returned conversation is c plus the extracted data when all of that
// was valid (the error's Kept lists it), or c itself.
func applyProposal(c Conversation, eff effect, a ConversationAction, p Proposal) (Conversation, Turn, error) {
	var problems, dataProblems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	badData := func(format string, args ...any) { dataProblems = append(dataProblems, fmt.Sprintf(format, args...)) }

	mode := Mode(strings.ToUpper(strings.TrimSpace(string(p.Mode))))
	if mode != ModeQuestion && mode != ModeSuggestion {
		bad("mode %q is not QUESTION or SUGGESTION", truncate(string(p.Mode), 40))
	}

	// Extracted data, applied to a copy.
	c2 := c.clone()
	var kept []SpecField
	seen := map[SpecField]bool{}
	for _, fv := range p.ExtractedData {
		f := SpecField(strings.TrimSpace(string(fv.Field)))
		d, ok := lookupField(f)
		switch {
		case !ok:
			badData("extracted_data names unknown field %q", truncate(string(fv.Field), 40))
			continue
		case seen[f]:
			badData("extracted_data gives field %q twice", f)
			continue
		}
		seen[f] = true
		n, err := d.normalize(fv)
		if err != nil {
			badData("extracted_data: %v", err)
			continue
		}
		if f == FieldChannel && n.Value != c.Spec.Channel && !strings.Contains(a.Text, n.Value) {
			badData("extracted_data: channel %q was not mentioned by the user", n.Value)
			continue
		}
		c2.Spec.set(n)
		c2.settle(f)
		kept = append(kept, f)
	}

	// Next step.
	next := ConversationStep(strings.TrimSpace(string(p.NextStep)))
	if next == "" {
		next = c.Step // no transition: stay (seed 003 §3.2)
	}
	switch {
	case !next.Valid():
		bad("next_step %q is not a step", truncate(string(p.NextStep), 40))
	case next == c.Step:
		// Staying is always allowed.
	case next == StepComplete && len(p.ExtractedData) > 0:
		bad("next_step complete is not allowed while changing fields; show the review again")
	case !slices.Contains(c.NextSteps(), next) && !slices.Contains(c2.NextSteps(), next):
		bad("next_step %q is not a valid transition from %q (valid: %s)", next, c.Step, joinSteps(c2.NextSteps()))
	}

	// Target field and choices.
	target := SpecField(strings.TrimSpace(string(p.TargetField)))
	if target != "" {
		if _, ok := lookupField(target); !ok {
			bad("target_field %q is not a field", truncate(string(p.TargetField), 40))
			target = ""
		}
	}
	if f, ok := next.Field(); ok {
		if target != "" && target != f {
			bad("target_field %q does not match next_step %q", target, next)
		}
		target = f
	}
	if next == StepReview || next == StepComplete {
		target = ""
	}
	var suggestions, options []string
	if mode == ModeSuggestion && target != "" {
		d, _ := lookupField(target)
		suggestions = cleanChoices(d, p.Suggestions)
		if len(cleanChoices(d, p.Options)) > 0 && d.kind != kindList {
			bad("options (multi-select) are only for list fields, not %q", target)
		}
		if d.kind == kindList {
			options = cleanChoices(d, p.Options)
		}
	} else if mode == ModeSuggestion && next != StepReview && next != StepComplete &&
		(len(p.Suggestions) > 0 || len(p.Options) > 0) {
		bad("suggestions or options need a target_field")
	}
	switch {
	case len(dataProblems) > 0:
		return c, Turn{}, &ProposalError{Problems: append(dataProblems, problems...)}
	case len(problems) > 0:
		return c2, Turn{}, &ProposalError{Problems: problems, Kept: kept}
	}

	c2.Step = next
	t := Turn{Step: next, Message: cleanMessage(p.Message), TargetField: target}
	if d, ok := lookupField(target); ok {
		if d.kind == kindChoice && len(suggestions) == 0 && next.IsData() {
			suggestions = slices.Clone(d.choices)
		}
		t.Suggestions, t.Options = suggestions, options
		t.Skippable = next.IsData() && c2.skippable(target)
	}
	switch next {
	case StepReview:
		t.Suggestions = []string{ReviewConfirm, ReviewChange}
		t.Review = c2.Spec.ReviewLines()
	case StepComplete:
		if err := c2.Spec.Validate(); err != nil {
			return c2, Turn{}, &ProposalError{Problems: []string{"next_step complete with an invalid configuration: " + err.Error()}, Kept: kept}
		}
	}
	if t.Message == "" {
		t.Message = defaultMessage(c2, next)
	}
	return c2, t, nil
}

// cleanChoices trims the model's choices, drops empty, too long, duplicate and (for
// fields with a fixed type) invalid ones, and keeps at most MaxChoices. Choice fields
// are normalised to their canonical values.
func cleanChoices(d fieldDef, in []string) []string {
	var out []string
	for _, s := range in {
		s = cleanLine(s)
		if s == "" || utf8.RuneCountInString(s) > MaxChoiceLen {
			continue
		}
		if d.kind != kindList {
			n, err := d.normalizeScalar(s)
			if err != nil {
				continue
			}
			if d.kind == kindChoice {
				s = n
			}
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
		if len(out) == MaxChoices {
			break
		}
	}
	return out
}

// stayTurn is the turn after an invalid proposal: stay on the current step and say
// so, naming what was saved (the user's own choice, the proposal's kept data).
func stayTurn(c Conversation, eff effect, kept []SpecField) Turn {
	var saved []SpecField
	if eff.set != "" {
		saved = append(saved, eff.set)
	}
	for _, f := range kept {
		if !slices.Contains(saved, f) {
			saved = append(saved, f)
		}
	}
	sorry := "Sorry, I got muddled there and didn't change anything. "
	if len(saved) > 0 {
		sorry = "Saved " + titles(saved) + ". Sorry, I got muddled about what comes next. "
	}
	t := Turn{Step: c.Step}
	switch f, isData := c.Step.Field(); {
	case c.Step == StepReview:
		t.Message = sorry + "Here is the configuration again: choose Confirm to create the stream, or Change to edit it."
		t.Suggestions = []string{ReviewConfirm, ReviewChange}
		t.Review = c.Spec.ReviewLines()
	case isData && !c.IsSettled(f):
		d, _ := lookupField(f)
		t.Message = sorry + d.question
		t.TargetField = f
		if c.Last.TargetField == f {
			t.Suggestions, t.Options = c.Last.Suggestions, c.Last.Options
		} else if d.kind == kindChoice {
			t.Suggestions = slices.Clone(d.choices)
		}
		t.Skippable = c.skippable(f)
	default:
		t.Message = sorry + "Could you tell me more, or say what you'd like to set next?"
		if len(saved) > 0 {
			t.Message = "Saved " + titles(saved) + ". Sorry, I lost my train of thought there. What would you like to set next?"
		}
		if m := c.missing(); len(m) > 0 {
			t.Message += " Still needed: " + labels(m) + "."
		}
	}
	return t
}

// titles joins the fields' labels as they are ("Type, Name").
func titles(fields []SpecField) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = f.Label()
	}
	return strings.Join(s, ", ")
}

// defaultMessage is the bot's message when the model gave none.
func defaultMessage(c Conversation, s ConversationStep) string {
	if d, ok := lookupField(SpecField(s)); ok {
		return d.question
	}
	switch s {
	case StepReview:
		return "Here is the stream configuration. Choose Confirm to create it, or Change to edit it."
	case StepComplete:
		return fmt.Sprintf("Done! %q is set up: I'll post a digest %s.", c.Spec.Name, c.Spec.Schedule().Describe())
	}
	return "Tell me more about what you'd like this stream to watch."
}

// cleanMessage trims a model message and bounds its length.
func cleanMessage(s string) string {
	return truncate(cleanText(s), MaxMessageLen)
}

func labels(fields []SpecField) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = strings.ToLower(f.Label())
	}
	return strings.Join(s, ", ")
}
