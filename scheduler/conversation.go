package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ConversationStep is a step of the stream creation workflow (seed 003 §1).
type ConversationStep string

// The workflow steps. Exploration, review and complete collect no data; every other
// step collects the field of the same name.
const (
	StepExploration      ConversationStep = "exploration"
	StepPurpose          ConversationStep = "purpose"
	StepBusinessGoals    ConversationStep = "business_goals"
	StepExpectedOutcomes ConversationStep = "expected_outcomes"
	StepStreamName       ConversationStep = "stream_name"
	StepStreamType       ConversationStep = "stream_type"
	StepFocusAreas       ConversationStep = "focus_areas"
	StepKeywords         ConversationStep = "keywords"
	StepCompetitors      ConversationStep = "competitors"
	StepReportFrequency  ConversationStep = "report_frequency"
	StepChannel          ConversationStep = "channel"
	StepTimeOfDay        ConversationStep = "time_of_day"
	StepTimeZone         ConversationStep = "time_zone"
	StepWeekday          ConversationStep = "weekday"
	StepMonthDay         ConversationStep = "month_day"
	StepReview           ConversationStep = "review"
	StepComplete         ConversationStep = "complete"
)

// Steps lists every step: exploration, the data steps in workflow order, review, complete.
func Steps() []ConversationStep {
	out := []ConversationStep{StepExploration}
	for _, d := range fieldDefs {
		out = append(out, ConversationStep(d.field))
	}
	return append(out, StepReview, StepComplete)
}

// Field returns the field a data step collects, and false for the other steps.
func (s ConversationStep) Field() (Field, bool) {
	if _, ok := lookupField(Field(s)); ok {
		return Field(s), true
	}
	return "", false
}

// IsData reports whether s collects a field.
func (s ConversationStep) IsData() bool {
	_, ok := s.Field()
	return ok
}

// Valid reports whether s is a known step.
func (s ConversationStep) Valid() bool {
	return s == StepExploration || s == StepReview || s == StepComplete || s.IsData()
}

// AllowedTransitions returns the steps the workflow graph allows after from, ignoring
// which fields are already filled (seed 003 §1): from exploration, exploration itself,
// every data step and review; from a data step, exploration, every other data step and
// review; from review, exploration and complete; from complete, nothing. Exploration is
// always reachable except from complete. [Conversation.NextSteps] narrows this to the
// steps valid in a given state.
func AllowedTransitions(from ConversationStep) []ConversationStep {
	switch {
	case from == StepComplete || !from.Valid():
		return nil
	case from == StepReview:
		return []ConversationStep{StepExploration, StepComplete}
	}
	out := []ConversationStep{StepExploration}
	for _, d := range fieldDefs {
		if ConversationStep(d.field) != from {
			out = append(out, ConversationStep(d.field))
		}
	}
	return append(out, StepReview)
}

// ActionKind is the kind of a user action (seed 003 §2).
type ActionKind string

// The user action kinds.
const (
	// ActionOptionSelected: the user clicked one suggestion button (Action.Value).
	// At the review step the suggestions are Confirm and Change.
	ActionOptionSelected ActionKind = "option_selected"
	// ActionOptionsSelected: the user ticked checkboxes and continued (Action.Values).
	ActionOptionsSelected ActionKind = "options_selected"
	// ActionTextInput: the user typed free text (Action.Text).
	ActionTextInput ActionKind = "text_input"
	// ActionSkipStep: the user clicked Skip on an optional field.
	ActionSkipStep ActionKind = "skip_step"
	// ActionFieldEdit: at the review, the user edited one field inline
	// (Action.Field, the new value in Action.Text; see review_edit.go).
	ActionFieldEdit ActionKind = "field_edit"
)

// Action is what the user did. The field a selection is for is not carried by the
// action: it is the target field of the conversation's last turn, so a button from an
// older message cannot write into a different field.
//
// Turn is the number of the turn whose control was used (Turn.Number). A click
// on any turn but the last one is refused as stale (ErrStaleChoice), so an old
// Skip cannot skip whatever the current step is. 0 means unknown (typed text,
// controls posted before turns were numbered) and is not checked.
type Action struct {
	Kind   ActionKind `json:"kind"`
	Turn   int        `json:"turn,omitempty"`
	Value  string     `json:"value,omitempty"`  // option_selected
	Values []string   `json:"values,omitempty"` // options_selected
	Text   string     `json:"text,omitempty"`   // text_input, field_edit
	Field  Field      `json:"field,omitempty"`  // field_edit
}

// Review button labels, offered as the suggestions of the review turn.
const (
	ReviewConfirm = "Confirm"
	ReviewChange  = "Change"
)

// Limits on a conversation.
const (
	MaxInputLen    = 4000 // runes of one text_input
	MaxMessageLen  = 3000 // runes of one bot message (a Slack section's limit)
	MaxChoices     = 10   // suggestions or options in one turn
	MaxChoiceLen   = 150  // runes of one suggestion or option
	MaxHistory     = 60   // entries kept in Conversation.History
	promptHistory  = 20   // entries shown to the model
	promptEntryLen = 2000 // runes of one history entry shown to the model
)

// Turn is what the bot says after an action: a message, and the controls to offer.
type Turn struct {
	Step        ConversationStep `json:"step"`
	Message     string           `json:"message"`      // untrusted plain text: escape before posting
	TargetField Field            `json:"target_field"` // the field Suggestions and Options fill; "" if none
	Suggestions []string         `json:"suggestions"`  // single-select buttons
	Options     []string         `json:"options"`      // multi-select checkboxes, then Continue
	Skippable   bool             `json:"skippable"`    // offer a Skip button
	// Number counts the bot's turns in the conversation, from 1. Controls carry
	// it (Action.Turn), so a click on an older turn's button is refused.
	Number int `json:"number,omitempty"`
	// Review is the whole configuration, set only at the review step, whose
	// Suggestions are Confirm and Change.
	Review []ReviewLine `json:"review,omitempty"`
}

// Entry is one message of the conversation history.
type Entry struct {
	Role string           `json:"role"` // "user" or "assistant"
	Step ConversationStep `json:"step"` // the step the conversation was at
	Text string           `json:"text"`
}

// Conversation is the state of one stream creation conversation. It is a value:
// [Apply] returns a new one and never modifies its argument.
type Conversation struct {
	Step ConversationStep `json:"step"`
	Spec Spec             `json:"spec"`
	// Settled lists the fields the user has given or skipped, in workflow order. A
	// data step is available only while its field is unsettled. Defaulted fields
	// (channel, time, time zone, weekday, day of month) have a value but stay unsettled
	// until the user confirms or changes them.
	Settled []Field `json:"settled"`
	// Last is the bot's latest turn; its target field and choices are what the user's
	// next selection refers to.
	Last    Turn    `json:"last"`
	History []Entry `json:"history"`
	// Rejected lists what was wrong with the model's previous proposal for the
	// same action. [Advance] sets it only on the copy it shows the model when it
	// asks again ([RenderPrompt] includes it); it is never stored.
	Rejected []string `json:"-"`
	// Editing is the id of the stream this conversation edits (StartEdit);
	// "" while a new stream is being set up.
	Editing string `json:"editing,omitempty"`
	// Shown is where the adapter showed Last (a Slack message ts), so it can
	// take that turn's buttons away once the user answers by typing; it
	// means nothing to the scheduler.
	Shown string `json:"shown,omitempty"`
}

// BeginConversation begins a conversation for owner in channel, whose Slack profile time zone is tz
// (UTC when empty or unknown). The digest defaults to channel at 09:00 in tz, on Mondays
// for weekly streams and on the 1st for monthly ones.
func BeginConversation(owner, channel, tz string, now time.Time) (Conversation, Turn) {
	spec := Spec{
		Owner:     owner,
		CreatedAt: now,
		TimeOfDay: DefaultTimeOfDay,
		TimeZone:  DefaultTimeZone,
		Weekday:   DefaultWeekday,
		MonthDay:  DefaultMonthDay,
	}
	if d, ok := lookupField(FieldChannel); ok {
		if v, err := d.normalize(FieldValue{Value: channel}); err == nil {
			spec.Channel = v.Value
		}
	}
	if loc, err := LoadZone(tz); err == nil {
		spec.TimeZone = loc.String()
	}
	c := Conversation{Step: StepExploration, Spec: spec}
	t := Turn{
		Step: StepExploration,
		Message: "Let's set up a research stream: I'll watch a topic for you and post a digest of what's new on a schedule. " +
			"What would you like to keep an eye on, and why?",
	}
	t.Number = 1
	c.Last = t
	c.History = []Entry{{Role: "assistant", Step: StepExploration, Text: t.Message}}
	return c, t
}

// IsSettled reports whether the user has given or skipped f.
func (c Conversation) IsSettled(f Field) bool { return slices.Contains(c.Settled, f) }

// RequiredComplete reports whether every required field has a value (and every
// defaulted field still has one), so the review step is reachable.
func (c Conversation) RequiredComplete() bool {
	return len(c.missing()) == 0
}

// missing lists the required or defaulted fields without a value.
func (c Conversation) missing() []Field {
	var out []Field
	for _, d := range fieldDefs {
		if (d.required || d.defaulted) && c.Spec.relevant(d.field) && !c.Spec.has(d.field) {
			out = append(out, d.field)
		}
	}
	return out
}

// NextSteps returns the steps valid after the current one (seed 003 §1): from
// exploration or a data step, exploration, every other data step whose field is
// unsettled and applies to the chosen frequency, and review once every required field
// is filled; from review, exploration and complete; from complete, none. Staying on the
// current step is not a transition and is always accepted (except at complete).
func (c Conversation) NextSteps() []ConversationStep {
	var out []ConversationStep
	for _, s := range AllowedTransitions(c.Step) {
		if f, ok := s.Field(); ok && (c.IsSettled(f) || !c.Spec.relevant(f)) {
			continue
		}
		if s == StepReview && !c.RequiredComplete() {
			continue
		}
		out = append(out, s)
	}
	return out
}

// TurnProposer proposes the bot's next turn. The real implementation calls a language model
// with [RenderPrompt] and a strict JSON schema for [Proposal]; it lives elsewhere.
type TurnProposer interface {
	Propose(ctx context.Context, c Conversation, a Action) (Proposal, error)
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
	TargetField   Field            `json:"target_field" jsonschema:"enum=,enum=purpose,enum=business_goals,enum=expected_outcomes,enum=stream_name,enum=stream_type,enum=focus_areas,enum=keywords,enum=competitors,enum=report_frequency,enum=channel,enum=time_of_day,enum=time_zone,enum=weekday,enum=month_day" jsonschema_description:"the field the suggestions or options are for; empty in QUESTION mode"`
	ExtractedData []FieldValue     `json:"extracted_data" jsonschema_description:"field values stated by the user in their message; empty if none"`
	Suggestions   []string         `json:"suggestions" jsonschema_description:"single-select choices for target_field; empty if none"`
	Options       []string         `json:"options" jsonschema_description:"multi-select choices for a list target_field; empty if none"`
	NextStep      ConversationStep `json:"next_step" jsonschema:"enum=exploration,enum=purpose,enum=business_goals,enum=expected_outcomes,enum=stream_name,enum=stream_type,enum=focus_areas,enum=keywords,enum=competitors,enum=report_frequency,enum=channel,enum=time_of_day,enum=time_zone,enum=weekday,enum=month_day,enum=review,enum=complete" jsonschema_description:"the next step, chosen from the valid next steps"`
}

// Errors of [Apply]; test with errors.Is. An *ActionError wraps one of the first group;
// a *ProposalError wraps ErrInvalidProposal.
var (
	ErrFinished         = errors.New("scheduler: the conversation is complete")
	ErrUnknownAction    = errors.New("scheduler: unknown action")
	ErrEmptyInput       = errors.New("scheduler: empty input")
	ErrInputTooLong     = errors.New("scheduler: input too long")
	ErrStaleChoice      = errors.New("scheduler: choice is not on offer")
	ErrRequiredField    = errors.New("scheduler: required field cannot be skipped")
	ErrNothingToSkip    = errors.New("scheduler: nothing to skip")
	ErrInvalidProposal  = errors.New("scheduler: invalid model proposal")
	ErrModelUnavailable = errors.New("scheduler: model unavailable")
)

// ActionError is a refused user action. Message is a helpful sentence for the user.
type ActionError struct {
	Err     error // one of the ErrXxx sentinels, or a *ValueError
	Message string
}

// Error joins the underlying error and the user-facing message.
func (e *ActionError) Error() string { return e.Err.Error() + ": " + e.Message }

// Unwrap returns the underlying error.
func (e *ActionError) Unwrap() error { return e.Err }

// ProposalError lists what was wrong with a model proposal. It wraps ErrInvalidProposal.
type ProposalError struct {
	Problems []string
	// Kept lists the fields of the proposal's extracted data that were applied
	// anyway: they were valid, and only the next step or the choices were wrong.
	Kept []Field
}

// Error lists the problems.
func (e *ProposalError) Error() string {
	return ErrInvalidProposal.Error() + ": " + strings.Join(e.Problems, "; ")
}

// Unwrap returns ErrInvalidProposal.
func (e *ProposalError) Unwrap() error { return ErrInvalidProposal }

// NeedsModel reports whether handling a in c needs a model proposal. It is false for
// an action [Apply] will refuse and for the review step's Confirm and Change buttons,
// which are handled deterministically.
func NeedsModel(c Conversation, a Action) bool {
	_, eff, err := applyAction(c, a)
	return err == nil && eff.decision == ""
}

// Advance handles one user action: it asks m for a proposal when one is needed and
// applies it. When the proposal breaks the rules, the model is asked once more, with
// the problems fed back (Conversation.Rejected); if that answer is no better, the
// first one's valid extracted data is kept (see [Apply]). Like [Apply] it always
// returns a usable conversation and turn; when the model fails, the conversation is
// unchanged, the turn says so, and the error wraps ErrModelUnavailable.
func Advance(ctx context.Context, m TurnProposer, c Conversation, a Action) (Conversation, Turn, error) {
	if !NeedsModel(c, a) {
		return Apply(c, a, Proposal{})
	}
	p, err := m.Propose(ctx, c, a)
	if err != nil {
		t := c.Last
		t.Message = "Sorry, I can't think right now (the language model did not answer). Please try again in a moment."
		return c, t, fmt.Errorf("%w: %w", ErrModelUnavailable, err)
	}
	next, turn, err := Apply(c, a, p)
	var first *ProposalError
	if !errors.As(err, &first) {
		return next, turn, err
	}
	again := c.clone()
	again.Rejected = slices.Clone(first.Problems)
	p2, perr := m.Propose(ctx, again, a)
	if perr != nil {
		return next, turn, err
	}
	next2, turn2, err2 := Apply(c, a, p2)
	var second *ProposalError
	if errors.As(err2, &second) && len(second.Kept) < len(first.Kept) {
		return next, turn, err // the retry kept less of what the user said
	}
	return next2, turn2, err2
}

// Apply validates the user's action a and the model's proposal p, and returns the next
// conversation state and the bot's turn. It is deterministic and never modifies c.
//
// The result is always usable (store the conversation, post the turn); a non-nil error
// says why the conversation did not move:
//   - *ActionError: the action was refused (a required field skipped, a button from an
//     old message, empty text, a finished conversation). The conversation is returned
//     unchanged and the turn repeats the last one with a helpful message.
//   - *ProposalError: the proposal broke the rules (a step not in [Conversation.NextSteps],
//     an unknown field, a value of the wrong type, ...). The user's own action is kept
//     and the conversation stays on its step; the turn says so. The extracted data is
//     checked on its own (seed 003 §3–4): when it is all valid and only the next step,
//     the mode or the choices are wrong, it is applied (ProposalError.Kept names it);
//     when any of it is invalid, none of it is. Callers may retry the model with the
//     original conversation ([Advance] does, once).
//
// The review step's Confirm and Change buttons ignore p: Confirm completes the
// conversation, Change returns to exploration.
func Apply(c Conversation, a Action, p Proposal) (Conversation, Turn, error) {
	c = c.clone()
	c1, eff, err := applyAction(c, a)
	if err != nil {
		t := c.Last
		var ae *ActionError
		if errors.As(err, &ae) {
			t.Message = ae.Message
		}
		return c, t, err
	}
	if eff.decision != "" {
		return decide(c1, eff.decision)
	}
	c2, t, err := applyProposal(c1, eff, a, p)
	if err != nil {
		var kept []Field
		if pe := (*ProposalError)(nil); errors.As(err, &pe) {
			kept = pe.Kept
		}
		t = c2.record(stayTurn(c2, eff, kept))
		return c2, t, err
	}
	t = c2.record(t)
	return c2, t, nil
}

// effect is what a valid action did before the model is consulted.
type effect struct {
	completed bool   // the current data step's field was just given or skipped
	set       Field  // the field the action set or skipped, if any
	decision  string // review button: ReviewConfirm or ReviewChange
}

// applyAction validates a and applies it to c (seed 003 §3, "before LLM call").
func applyAction(c Conversation, a Action) (Conversation, effect, error) {
	var eff effect
	if c.Step == StepComplete {
		return c, eff, &ActionError{Err: ErrFinished, Message: "This stream is already set up; start a new conversation to create another."}
	}
	c = c.clone()
	current, isData := c.Step.Field()
	if a.Kind != ActionTextInput && a.Turn != 0 && a.Turn != c.Last.Number {
		return c, eff, staleChoice()
	}
	switch a.Kind {
	case ActionTextInput:
		text := cleanText(a.Text)
		if text == "" {
			return c, eff, &ActionError{Err: ErrEmptyInput, Message: "I didn't get any text. Type your answer, or use the buttons."}
		}
		if n := utf8.RuneCountInString(text); n > MaxInputLen {
			return c, eff, &ActionError{Err: ErrInputTooLong, Message: fmt.Sprintf("That message is %d characters long; please keep it under %d.", n, MaxInputLen)}
		}
		c.addHistory("user", text)
		return c, eff, nil

	case ActionOptionSelected:
		value := strings.TrimSpace(a.Value)
		if c.Step == StepReview && c.Last.Step == StepReview {
			if value != ReviewConfirm && value != ReviewChange {
				return c, eff, staleChoice()
			}
			c.addHistory("user", value)
			eff.decision = value
			return c, eff, nil
		}
		f := c.Last.TargetField
		if f == "" || !slices.Contains(c.Last.Suggestions, value) {
			return c, eff, staleChoice()
		}
		if err := c.setField(FieldValue{Field: f, Value: value, Values: listOf(f, value)}); err != nil {
			return c, eff, err
		}
		c.addHistory("user", "Selected for "+f.Label()+": "+value)
		eff.set = f
		eff.completed = isData && f == current
		return c, eff, nil

	case ActionOptionsSelected:
		f := c.Last.TargetField
		if f == "" || len(c.Last.Options) == 0 {
			return c, eff, staleChoice()
		}
		var values []string
		for _, v := range a.Values {
			v = strings.TrimSpace(v)
			if !slices.Contains(c.Last.Options, v) {
				return c, eff, staleChoice()
			}
			values = append(values, v)
		}
		if len(values) == 0 {
			msg := "Tick at least one box, or type your own answer."
			if f.Optional() {
				msg = "Tick at least one box, type your own answer, or skip this step."
			}
			return c, eff, &ActionError{Err: ErrEmptyInput, Message: msg}
		}
		if err := c.setField(FieldValue{Field: f, Values: values}); err != nil {
			return c, eff, err
		}
		c.addHistory("user", "Selected for "+f.Label()+": "+strings.Join(values, ", "))
		eff.set = f
		eff.completed = isData && f == current
		return c, eff, nil

	case ActionSkipStep:
		if !isData {
			return c, eff, &ActionError{Err: ErrNothingToSkip, Message: "There is no question to skip right now."}
		}
		d, _ := lookupField(current)
		if !c.skippable(current) {
			return c, eff, &ActionError{Err: ErrRequiredField, Message: fmt.Sprintf(
				"%s is required, so this step can't be skipped. Pick an option or type your answer.", d.label)}
		}
		if d.kind == kindList {
			c.Spec.set(FieldValue{Field: current})
		}
		c.settle(current)
		c.addHistory("user", "Skipped "+d.label)
		eff.set = current
		eff.completed = true
		return c, eff, nil

	case ActionFieldEdit:
		return c.applyFieldEdit(a)
	}
	return c, eff, &ActionError{Err: ErrUnknownAction, Message: "Sorry, I don't know that kind of action."}
}

// skippable reports whether the user may skip f: it is optional and, if it is one of
// the defaulted fields, still has a value to keep.
func (c Conversation) skippable(f Field) bool {
	d, ok := lookupField(f)
	return ok && !d.required && (!d.defaulted || c.Spec.has(f))
}

func staleChoice() error {
	return &ActionError{Err: ErrStaleChoice, Message: "That choice isn't on offer any more; please use the buttons on my latest message, or type your answer."}
}

// listOf returns []string{v} when f is a list field, so a single suggestion can fill it.
func listOf(f Field, v string) []string {
	if f.IsList() {
		return []string{v}
	}
	return nil
}

// setField validates v and stores it, settling the field. For a list field given as a
// single value (a clicked suggestion), Value is moved into Values.
func (c *Conversation) setField(v FieldValue) error {
	d, ok := lookupField(v.Field)
	if !ok {
		return &ActionError{Err: ErrStaleChoice, Message: "That choice isn't for a field I know."}
	}
	if d.kind == kindList && len(v.Values) > 0 {
		v.Value = ""
	}
	n, err := d.normalize(v)
	if err != nil {
		return &ActionError{Err: err, Message: err.Error() + "."}
	}
	c.Spec.set(n)
	c.settle(v.Field)
	return nil
}

// settle marks f as given or skipped, keeping Settled in workflow order.
func (c *Conversation) settle(f Field) {
	if c.IsSettled(f) {
		return
	}
	var out []Field
	for _, d := range fieldDefs {
		if d.field == f || c.IsSettled(d.field) {
			out = append(out, d.field)
		}
	}
	c.Settled = out
}

// applyProposal validates p against c (the state after the user's action) and applies
// it (seed 003 §3–4, "after LLM call"). The extracted data is validated on its own:
// on error the returned conversation is c plus the extracted data when all of that
// was valid (the error's Kept lists it), or c itself.
func applyProposal(c Conversation, eff effect, a Action, p Proposal) (Conversation, Turn, error) {
	var problems, dataProblems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	badData := func(format string, args ...any) { dataProblems = append(dataProblems, fmt.Sprintf(format, args...)) }

	mode := Mode(strings.ToUpper(strings.TrimSpace(string(p.Mode))))
	if mode != ModeQuestion && mode != ModeSuggestion {
		bad("mode %q is not QUESTION or SUGGESTION", truncate(string(p.Mode), 40))
	}

	// Extracted data, applied to a copy.
	c2 := c.clone()
	var kept []Field
	seen := map[Field]bool{}
	for _, fv := range p.ExtractedData {
		f := Field(strings.TrimSpace(string(fv.Field)))
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
	target := Field(strings.TrimSpace(string(p.TargetField)))
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

// decide handles the review buttons.
func decide(c Conversation, decision string) (Conversation, Turn, error) {
	if f, ok := strings.CutPrefix(decision, editedPrefix); ok {
		return reviewAgain(c, Field(f))
	}
	if decision == ReviewChange {
		c.Step = StepExploration
		t := Turn{Step: StepExploration, Message: "What would you like to change? Tell me in your own words, " +
			"for example \"make it weekly\" or \"add Acme Corp to the competitors\"."}
		t = c.record(t)
		return c, t, nil
	}
	if err := c.Spec.Validate(); err != nil {
		t := c.Last
		t.Message = "I can't create the stream yet: " + err.Error() + ". Choose Change to fix it."
		return c, t, &ActionError{Err: err, Message: t.Message}
	}
	c.Step = StepComplete
	t := Turn{Step: StepComplete, Message: fmt.Sprintf("Done! %q is set up: I'll post a digest %s.",
		c.Spec.Name, c.Spec.Schedule().Describe())}
	t = c.record(t)
	return c, t, nil
}

// stayTurn is the turn after an invalid proposal: stay on the current step and say
// so, naming what was saved (the user's own choice, the proposal's kept data).
func stayTurn(c Conversation, eff effect, kept []Field) Turn {
	var saved []Field
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
func titles(fields []Field) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = f.Label()
	}
	return strings.Join(s, ", ")
}

// defaultMessage is the bot's message when the model gave none.
func defaultMessage(c Conversation, s ConversationStep) string {
	if d, ok := lookupField(Field(s)); ok {
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

// record numbers t as the next turn, makes it the last turn, adds it to the
// history and returns it.
func (c *Conversation) record(t Turn) Turn {
	t.Number = c.Last.Number + 1
	c.Last = t
	c.addHistory("assistant", t.Message)
	return t
}

// addHistory appends an entry, keeping at most MaxHistory.
func (c *Conversation) addHistory(role, text string) {
	c.History = append(c.History, Entry{Role: role, Step: c.Step, Text: text})
	if n := len(c.History); n > MaxHistory {
		c.History = append([]Entry(nil), c.History[n-MaxHistory:]...)
	}
}

// clone returns a deep copy of c.
func (c Conversation) clone() Conversation {
	c.Spec = c.Spec.clone()
	c.Settled = slices.Clone(c.Settled)
	c.History = slices.Clone(c.History)
	c.Last.Suggestions = slices.Clone(c.Last.Suggestions)
	c.Last.Options = slices.Clone(c.Last.Options)
	c.Last.Review = slices.Clone(c.Last.Review)
	return c
}

func joinSteps(steps []ConversationStep) string {
	s := make([]string, len(steps))
	for i, st := range steps {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

func labels(fields []Field) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = strings.ToLower(f.Label())
	}
	return strings.Join(s, ", ")
}
