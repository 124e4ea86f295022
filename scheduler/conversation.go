package scheduler

// A stream creation conversation (seed 003): its state, the user's actions,
// the bot's turns, and the entry points Advance and Apply.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ActionKind is the kind of a user action (seed 003 §2).
type ActionKind string

// The user action kinds.
const (
	// ActionOptionSelected: the user clicked one suggestion button (Action.Value).
	// At the review step the suggestions are Confirm and Change.
	ActionOptionSelected ActionKind = "option_selected"
	// ActionOptionsSelected: the user ticked checkboxes and continued (Action.Values).
	ActionOptionsSelected ActionKind = "options_selected"
	// ActionTextInput: the user typed free text (ConversationAction.Text).
	ActionTextInput ActionKind = "text_input"
	// ActionSkipStep: the user clicked Skip on an optional field.
	ActionSkipStep ActionKind = "skip_step"
	// ActionFieldEdit: at the review, the user edited one field inline
	// (ConversationAction.Field, the new value in ConversationAction.Text; see review_edit.go).
	ActionFieldEdit ActionKind = "field_edit"
)

// ConversationAction is what the user did in a stream's creation
// conversation. The field a selection is for is not carried by the action: it
// is the target field of the conversation's last turn, so a button from an
// older message cannot write into a different field.
//
// Turn is the number of the turn whose control was used (Turn.Number). A click
// on any turn but the last one is refused as stale (ErrStaleChoice), so an old
// Skip cannot skip whatever the current step is. 0 means unknown (typed text,
// controls posted before turns were numbered) and is not checked.
type ConversationAction struct {
	Kind   ActionKind `json:"kind"`
	Turn   int        `json:"turn,omitempty"`
	Value  string     `json:"value,omitempty"`  // option_selected
	Values []string   `json:"values,omitempty"` // options_selected
	Text   string     `json:"text,omitempty"`   // text_input, field_edit
	Field  SpecField  `json:"field,omitempty"`  // field_edit
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
	TargetField SpecField        `json:"target_field"` // the field Suggestions and Options fill; "" if none
	Suggestions []string         `json:"suggestions"`  // single-select buttons
	Options     []string         `json:"options"`      // multi-select checkboxes, then Continue
	Skippable   bool             `json:"skippable"`    // offer a Skip button
	// Number counts the bot's turns in the conversation, from 1. Controls carry
	// it (ConversationAction.Turn), so a click on an older turn's button is refused.
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
	Settled []SpecField `json:"settled"`
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
func (c Conversation) IsSettled(f SpecField) bool { return slices.Contains(c.Settled, f) }

// RequiredComplete reports whether every required field has a value (and every
// defaulted field still has one), so the review step is reachable.
func (c Conversation) RequiredComplete() bool {
	return len(c.missing()) == 0
}

// missing lists the required or defaulted fields without a value.
func (c Conversation) missing() []SpecField {
	var out []SpecField
	for _, d := range fieldDefs {
		if (d.required || d.defaulted) && c.Spec.relevant(d.field) && !c.Spec.has(d.field) {
			out = append(out, d.field)
		}
	}
	return out
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
	Kept []SpecField
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
func NeedsModel(c Conversation, a ConversationAction) bool {
	_, eff, err := applyAction(c, a)
	return err == nil && eff.decision == ""
}

// Advance handles one user action: it asks m for a proposal when one is needed and
// applies it. When the proposal breaks the rules, the model is asked once more, with
// the problems fed back (Conversation.Rejected); if that answer is no better, the
// first one's valid extracted data is kept (see [Apply]). Like [Apply] it always
// returns a usable conversation and turn; when the model fails, the conversation is
// unchanged, the turn says so, and the error wraps ErrModelUnavailable.
func Advance(ctx context.Context, m TurnProposer, c Conversation, a ConversationAction) (Conversation, Turn, error) {
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
func Apply(c Conversation, a ConversationAction, p Proposal) (Conversation, Turn, error) {
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
		var kept []SpecField
		if pe := (*ProposalError)(nil); errors.As(err, &pe) {
			kept = pe.Kept
		}
		t = c2.record(stayTurn(c2, eff, kept))
		return c2, t, err
	}
	t = c2.record(t)
	return c2, t, nil
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
