// Package checkpoints holds researchbot's human checkpoints as data.
//
// A Definition describes a kind of checkpoint (what it asks, the fields of its
// form, where in the pipeline it sits, in which modes it applies, its timeout,
// retries and circuit breaker). An Instance is one offering of a definition in
// one run, with a lifecycle (seed 004 §4) and an audit trail. A Decision is a
// person's answer: approve, edit (with revised field values) or reject (with a
// note). Everything here is pure: no storage, no Slack, no clock but the one
// passed in.
package checkpoints

import (
	"encoding/json"
	"time"
)

// FieldType is one of the nine field types a checkpoint form may use.
type FieldType string

// The nine field types of seed 004.
const (
	FieldText        FieldType = "text"         // one line of text; value: string
	FieldTextarea    FieldType = "textarea"     // several lines; value: string
	FieldSelect      FieldType = "select"       // one of Options; value: string
	FieldMultiSelect FieldType = "multi_select" // some of Options; value: []string
	FieldCheckbox    FieldType = "checkbox"     // with Options: some of them ([]string); without: a yes/no (bool)
	FieldRadio       FieldType = "radio"        // one of Options; value: string
	FieldNumber      FieldType = "number"       // a number within Min/Max when set; value: float64
	FieldRange       FieldType = "range"        // a number that must lie within Min..Max (both required); value: float64
	FieldChips       FieldType = "chips"        // tags: some of Options, or free tags when no Options; value: []string
)

// FieldTypes lists every supported field type, in a stable order.
func FieldTypes() []FieldType {
	return []FieldType{FieldText, FieldTextarea, FieldSelect, FieldMultiSelect, FieldCheckbox, FieldRadio, FieldNumber, FieldRange, FieldChips}
}

// Option is one choice of a select, multi_select, checkbox, radio or chips field.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// Field is one input of a checkpoint form.
type Field struct {
	Key         string    `json:"key"`
	Type        FieldType `json:"type"`
	Label       string    `json:"label"`
	Help        string    `json:"help,omitempty"`
	Required    bool      `json:"required,omitempty"`
	Placeholder string    `json:"placeholder,omitempty"`
	Options     []Option  `json:"options,omitempty"`
	Min         *float64  `json:"min,omitempty"`
	Max         *float64  `json:"max,omitempty"`
	// MaxLength bounds text and textarea values (runes); 0 means the default of 3000.
	MaxLength int `json:"max_length,omitempty"`
	// Default is the value a new form starts with when the instance has none.
	Default any `json:"default,omitempty"`
	// RuntimeOptions says the options are filled in per run when the
	// instance is made (e.g. the sources found), so a definition may leave
	// Options empty even for a select, radio or multi_select field.
	RuntimeOptions bool `json:"runtime_options,omitempty"`
}

// Position is where in the pipeline a checkpoint is offered.
type Position string

// Pipeline positions of the built-in research pipeline.
const (
	AfterPlanning Position = "after_planning" // the plan is ready, nothing searched yet
	AfterSearch   Position = "after_search"   // sources are found and ranked, nothing fetched yet
	AfterReview   Position = "after_review"   // the reviewer found critical issues in a draft
	BeforeOutput  Position = "before_output"  // the draft passed review and is about to be published
)

// Action is what a person decided.
type Action string

// The three decisions.
const (
	Approve Action = "approve"
	Edit    Action = "edit"
	Reject  Action = "reject"
)

// Mode names used by built-in definitions. A definition applies to a run when
// its Modes contain the run's mode or "*".
const (
	ModeAuto   = "auto"   // no checkpoints
	ModeGuided = "guided" // the default set: plan review, critical issues, draft review
	ModeFull   = "full"   // every checkpoint
)

// Definition is a kind of checkpoint, stored like any other data.
type Definition struct {
	ID          string   `json:"id"`           // stable slug, e.g. "plan_review"
	ControlType string   `json:"control_type"` // how a front end renders the payload, e.g. "plan_review"
	Label       string   `json:"label"`
	Description string   `json:"description"`
	Fields      []Field  `json:"fields"`
	Position    Position `json:"position"`
	SortOrder   int      `json:"sort_order"`
	Modes       []string `json:"modes"`
	// Actions lists the decisions a person may take; empty means all three.
	Actions  []Action      `json:"actions,omitempty"`
	Required bool          `json:"required"`
	Timeout  time.Duration `json:"timeout"` // 0: no timeout
	// OnTimeout is what happens when nobody decides by the deadline: by
	// default a reminder (or, for an optional checkpoint, a skip); with
	// TimeoutApprove the checkpoint approves itself, and says so.
	OnTimeout TimeoutPolicy `json:"on_timeout,omitempty"`
	// Reminders is how a required checkpoint that times out is reminded,
	// then escalated; nil means DefaultReminders.
	Reminders *ReminderPolicy `json:"reminders,omitempty"`
	// MaxRetries bounds how often a failed or timed-out instance is offered again.
	MaxRetries int `json:"max_retries"`
	// BreakerThreshold failures within BreakerWindow disable the definition.
	BreakerThreshold int           `json:"breaker_threshold"`
	BreakerWindow    time.Duration `json:"breaker_window"`
	Enabled          bool          `json:"enabled"`
	CreatedAt        time.Time     `json:"created_at"`
	UpdatedAt        time.Time     `json:"updated_at"`
}

// TimeoutPolicy is what a checkpoint does when nobody decides by its
// deadline (seed 001/004 timeout policies), stated per definition and shown
// to the person: never a silent decision.
type TimeoutPolicy string

// The timeout policies.
const (
	// TimeoutRemind, the default: a required checkpoint is offered again as
	// a reminder, as its ReminderPolicy says, then escalated once and left
	// waiting; an optional one is skipped. Nothing is decided.
	TimeoutRemind TimeoutPolicy = ""
	// TimeoutApprove: the checkpoint approves itself at its deadline, with
	// its current values, and the record says so (By is ByTimeout).
	TimeoutApprove TimeoutPolicy = "approve"
)

// ByTimeout is Decision.By of an approval made by the TimeoutApprove policy.
const ByTimeout = "timeout policy"

// State is where an instance is in its lifecycle (seed 004 §4):
//
//	pending → offered → active → submitted → collapsed
//	                  ↘ failed    → (retry) → offered
//	                  ↘ timed_out → (retry) → offered
//	                  ↘ skipped (optional only)
type State string

// Instance states.
const (
	StatePending   State = "pending"
	StateOffered   State = "offered"
	StateActive    State = "active" // someone opened it (e.g. the Edit modal)
	StateSubmitted State = "submitted"
	StateCollapsed State = "collapsed" // decided and rendered as a one-line record
	StateSkipped   State = "skipped"
	StateFailed    State = "failed"
	StateTimedOut  State = "timed_out"
)

// Instance is one offering of a definition in one run.
type Instance struct {
	ID           string `json:"id"` // opaque, unguessable
	RunID        string `json:"run_id"`
	DefinitionID string `json:"definition_id"`
	ControlType  string `json:"control_type"`
	Label        string `json:"label"`
	Required     bool   `json:"required"`
	// Fields is the definition's form with options resolved for this run
	// (e.g. the sources to choose from).
	Fields  []Field  `json:"fields"`
	Actions []Action `json:"actions"`
	State   State    `json:"state"`
	// Payload is what the person must judge, for rendering (plan, sources, draft summary).
	Payload json.RawMessage `json:"payload,omitempty"`
	// Values are the current field values: the pre-fill of an Edit form.
	Values   map[string]any `json:"values,omitempty"`
	Decision *Decision      `json:"decision,omitempty"`
	Attempt  int            `json:"attempt"`
	// MaxRetries and Timeout are copied from the definition when the instance is made.
	MaxRetries int           `json:"max_retries"`
	Timeout    time.Duration `json:"timeout"`
	// OnTimeout is copied from the definition: shown to the person, and
	// applied at DeadlineAt.
	OnTimeout TimeoutPolicy `json:"on_timeout,omitempty"`
	// Reminders is copied from the definition (nil: made before reminder
	// policies, DefaultReminders); Reminded counts the reminders posted and
	// RemindersStoppedAt is when they ran out and the escalation was made.
	Reminders          *ReminderPolicy `json:"reminders,omitempty"`
	Reminded           int             `json:"reminded,omitempty"`
	RemindersStoppedAt time.Time       `json:"reminders_stopped_at,omitzero"`
	LastError          string          `json:"last_error,omitempty"`
	CreatedAt          time.Time       `json:"created_at"`
	OfferedAt          time.Time       `json:"offered_at,omitzero"`
	DeadlineAt         time.Time       `json:"deadline_at,omitzero"`
	DecidedAt          time.Time       `json:"decided_at,omitzero"`
	Audit              []AuditEntry    `json:"audit"`
}

// Decision is a person's answer to an instance.
type Decision struct {
	Action Action         `json:"action"`
	Values map[string]any `json:"values,omitempty"` // revised field values, for Edit
	Note   string         `json:"note,omitempty"`   // reason for Reject, or a comment
	By     string         `json:"by"`               // who decided (a Slack user id, "terminal", "auto")
	At     time.Time      `json:"at"`
}

// AuditEntry records one transition of an instance.
type AuditEntry struct {
	At      time.Time `json:"at"`
	Actor   string    `json:"actor"`
	From    State     `json:"from"`
	To      State     `json:"to"`
	Note    string    `json:"note,omitempty"`
	Changes []Change  `json:"changes,omitempty"`
}

// Change is one field whose value a decision changed.
type Change struct {
	Key    string `json:"key"`
	Before any    `json:"before,omitempty"`
	After  any    `json:"after,omitempty"`
}

// FieldError is a problem with one submitted field.
type FieldError struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}
