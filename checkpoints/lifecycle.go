package checkpoints

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// Errors returned when a lifecycle transition is refused. Every refusal
// matches ErrInvalidTransition and, where there is a more specific reason,
// that reason too (errors.Is), so a caller may branch on either.
var (
	// ErrAlreadyDecided: the instance is submitted or collapsed; a second
	// decision (double click, duplicate delivery, old button) changes nothing.
	ErrAlreadyDecided = errors.New("checkpoints: already decided")
	// ErrNotOpen: the instance is not waiting for a person (pending, failed,
	// timed out or skipped).
	ErrNotOpen = errors.New("checkpoints: not open for a decision")
	// ErrActionNotAllowed: the definition does not offer this action.
	ErrActionNotAllowed = errors.New("checkpoints: action not allowed")
	// ErrCannotSkipRequired: only optional checkpoints may be skipped.
	ErrCannotSkipRequired = errors.New("checkpoints: a required checkpoint cannot be skipped")
	// ErrRetriesExhausted: the instance was offered 1+MaxRetries times.
	ErrRetriesExhausted = errors.New("checkpoints: retries exhausted")
	// ErrInvalidTransition: the instance's state does not allow the change.
	ErrInvalidTransition = errors.New("checkpoints: invalid transition")
)

// actorSystem is the audit actor of transitions no person made.
const actorSystem = "system"

// transitionError is a refused transition. It matches ErrInvalidTransition and
// its specific reason.
type transitionError struct {
	op     string
	from   State
	reason error
}

func (e *transitionError) Error() string {
	msg := fmt.Sprintf("checkpoints: cannot %s a checkpoint that is %s", e.op, e.from)
	if e.reason != nil {
		msg += ": " + strings.TrimPrefix(e.reason.Error(), "checkpoints: ")
	}
	return msg
}

func (e *transitionError) Unwrap() []error {
	if e.reason == nil {
		return []error{ErrInvalidTransition}
	}
	return []error{ErrInvalidTransition, e.reason}
}

func refuse(op string, from State, reason error) error {
	return &transitionError{op: op, from: from, reason: reason}
}

// Allows reports whether a person may take action a; empty Actions allow all
// three. Unknown actions are never allowed.
func (d Definition) Allows(a Action) bool {
	if len(d.Actions) == 0 {
		return slices.Contains(allActions(), a)
	}
	return slices.Contains(d.Actions, a)
}

// AppliesTo reports whether d applies to runs in mode: its Modes contain mode
// or "*".
func (d Definition) AppliesTo(mode string) bool {
	return slices.Contains(d.Modes, mode) || slices.Contains(d.Modes, "*")
}

// NewInstance makes a pending instance of def for run runID.
//
// It copies the definition's label, control type, required flag, actions
// (all three when the definition lists none), MaxRetries, Timeout, OnTimeout
// and its reminder policy (the default when it states none). fields
// is the form with options resolved for this run; nil means def.Fields. The
// values pre-fill the form: they are copied with their types normalised
// (e.g. []any → []string, numbers → float64), and every field with a Default
// and no value gets its default. The audit trail starts with the creation.
func NewInstance(def Definition, id, runID string, payload json.RawMessage, fields []Field, values map[string]any, now time.Time) Instance {
	if fields == nil {
		fields = def.Fields
	}
	fields = cloneFields(fields)
	actions := slices.Clone(def.Actions)
	if len(actions) == 0 {
		actions = allActions()
	}
	vals := coerceValues(fields, values)
	if vals == nil {
		vals = make(map[string]any, len(fields))
	}
	for _, f := range fields {
		if _, ok := vals[f.Key]; !ok && f.Default != nil {
			vals[f.Key] = coerce(f, cloneValue(f.Default))
		}
	}
	return Instance{
		ID:           id,
		RunID:        runID,
		DefinitionID: def.ID,
		ControlType:  def.ControlType,
		Label:        def.Label,
		Required:     def.Required,
		Fields:       fields,
		Actions:      actions,
		State:        StatePending,
		Payload:      slices.Clone(payload),
		Values:       vals,
		MaxRetries:   max(def.MaxRetries, 0),
		Timeout:      max(def.Timeout, 0),
		OnTimeout:    def.OnTimeout,
		Reminders:    new(def.ReminderPolicy()),
		CreatedAt:    now,
		Audit:        []AuditEntry{{At: now, Actor: actorSystem, To: StatePending, Note: "created"}},
	}
}

// record appends an audit entry and moves the instance to state to.
func (in *Instance) record(now time.Time, actor string, to State, note string, changes []Change) {
	actor = cmp.Or(actor, actorSystem)
	in.Audit = append(in.Audit, AuditEntry{At: now, Actor: actor, From: in.State, To: to, Note: note, Changes: changes})
	in.State = to
}

// Offer presents the instance to people: pending, failed or timed_out →
// offered. Each offer counts an attempt; the first offer and up to MaxRetries
// re-offers are allowed, after which Offer returns ErrRetriesExhausted and
// changes nothing. A re-offer of a timed-out instance counts as a reminder.
// OfferedAt becomes now and DeadlineAt now+Timeout, or the reminder policy's
// backed-off gap after a reminder (zero when there is no timeout).
func (in *Instance) Offer(now time.Time, actor string) error {
	switch in.State {
	case StatePending, StateFailed, StateTimedOut:
	case StateSubmitted, StateCollapsed:
		return refuse("offer", in.State, ErrAlreadyDecided)
	default:
		return refuse("offer", in.State, nil)
	}
	if in.Attempt > max(in.MaxRetries, 0) {
		return refuse("offer", in.State, fmt.Errorf("%w after %d attempts", ErrRetriesExhausted, in.Attempt))
	}
	in.Attempt++
	if in.State == StateTimedOut {
		in.Reminded++ // offered again because nobody decided: a reminder
	}
	in.OfferedAt = now
	in.DeadlineAt = time.Time{}
	if in.Timeout > 0 {
		in.DeadlineAt = now.Add(in.ReminderPolicy().Gap(in.Timeout, in.Reminded))
	}
	note := "offered"
	if in.Attempt > 1 {
		note = fmt.Sprintf("offered again (attempt %d of %d)", in.Attempt, max(in.MaxRetries, 0)+1)
	}
	in.record(now, actor, StateOffered, note, nil)
	return nil
}

// Activate records that someone opened the instance (e.g. the Edit form):
// offered → active. It is a no-op on an active instance.
func (in *Instance) Activate(now time.Time, actor string) error {
	switch in.State {
	case StateActive:
		return nil
	case StateOffered:
		in.record(now, actor, StateActive, "opened", nil)
		return nil
	case StateSubmitted, StateCollapsed:
		return refuse("open", in.State, ErrAlreadyDecided)
	default:
		return refuse("open", in.State, ErrNotOpen)
	}
}

// Decide records a person's decision: offered or active → submitted.
//
// A decided (submitted or collapsed) instance refuses with ErrAlreadyDecided,
// any other closed one with ErrNotOpen; an action the definition does not
// offer with ErrActionNotAllowed. A decision needs an author (By) and a time
// (At). A decision arriving after DeadlineAt but before TimeOut ran is
// accepted: the instance is still open.
//
// Edit: d.Values are the submitted form. A key absent from d.Values keeps its
// current value (in.Values); a key present with nil, blank or empty clears it.
// The result is validated against in.Fields; on failure Decide returns a
// *ValidationError and changes nothing. Otherwise the stored decision's
// Values are the whole normalised form, in.Values becomes that form, and the
// fields that changed are recorded in the audit entry.
//
// Approve accepts the current values (in.Values), so it is refused, with a
// *ValidationError naming each one, while a required field is empty (a
// required bare checkbox unchecked): Edit fills it in. Approve and Reject
// carry no values: d.Values is ignored and not stored.
// A Reject note may be empty; it is recorded as given (trimmed).
func (in *Instance) Decide(d Decision) error {
	switch in.State {
	case StateOffered, StateActive:
	case StateSubmitted, StateCollapsed:
		return refuse("decide", in.State, ErrAlreadyDecided)
	default:
		return refuse("decide", in.State, ErrNotOpen)
	}
	if !in.allows(d.Action) {
		return refuse("decide", in.State, fmt.Errorf("%w: %q", ErrActionNotAllowed, d.Action))
	}
	if strings.TrimSpace(d.By) == "" {
		return errors.New("checkpoints: a decision needs the person who made it (By)")
	}
	if d.At.IsZero() {
		return errors.New("checkpoints: a decision needs a time (At)")
	}
	d.Note = strings.TrimSpace(d.Note)
	if d.Action == Approve {
		if errs := MissingRequired(in.Fields, in.Values); len(errs) > 0 {
			return &ValidationError{Fields: errs}
		}
	}
	var changes []Change
	var newValues map[string]any
	if d.Action == Edit {
		merged := make(map[string]any, len(in.Fields)+len(d.Values))
		for _, f := range in.Fields {
			if v, ok := in.Values[f.Key]; ok {
				merged[f.Key] = v
			}
		}
		maps.Copy(merged, d.Values)
		norm, errs := Validate(in.Fields, merged)
		if len(errs) > 0 {
			return &ValidationError{Fields: errs}
		}
		before := make(map[string]any, len(in.Fields))
		for _, f := range in.Fields {
			if v, ok := in.Values[f.Key]; ok {
				before[f.Key] = coerce(f, v)
			}
		}
		changes = diffValues(before, norm)
		// Keys that name no field (none, normally) are kept as they were.
		newValues = cloneValues(norm)
		for k, v := range in.Values {
			if _, isField := fieldByKey(in.Fields, k); !isField {
				newValues[k] = v
			}
		}
		d.Values = cloneValues(norm)
		if len(d.Values) == 0 {
			d.Values = nil
		}
	} else {
		d.Values = nil
	}
	note := string(d.Action)
	if d.Note != "" {
		note += ": " + d.Note
	}
	if newValues != nil {
		in.Values = newValues
	}
	in.Decision = &d
	in.DecidedAt = d.At
	in.record(d.At, d.By, StateSubmitted, note, changes)
	return nil
}

// diffValues lists the keys whose values differ between before and after, in
// key order. Keys whose value is absent on one side have a nil Before or After.
func diffValues(before, after map[string]any) []Change {
	keys := make(map[string]bool, len(before)+len(after))
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var changes []Change
	for _, k := range sorted {
		b, a := before[k], after[k]
		if isEmpty(b) && isEmpty(a) || reflect.DeepEqual(b, a) {
			continue
		}
		changes = append(changes, Change{Key: k, Before: cloneValue(b), After: cloneValue(a)})
	}
	return changes
}

// isEmpty reports whether v counts as no value: nil, a blank string or an
// empty list.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []string:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// Collapse records that the engine applied the decision: submitted →
// collapsed.
func (in *Instance) Collapse(now time.Time) error {
	if in.State != StateSubmitted {
		return refuse("collapse", in.State, nil)
	}
	in.record(now, actorSystem, StateCollapsed, "applied", nil)
	return nil
}

// TimeOut records that nobody decided in time: offered or active, with a
// deadline that now has reached → timed_out. Before the deadline, without
// one, or in any other state it returns ErrInvalidTransition (with
// ErrAlreadyDecided for a decided instance). A timeout is never a rejection:
// the instance may be offered again (CanRetry), skipped if optional, or fail
// the run.
func (in *Instance) TimeOut(now time.Time) error {
	switch in.State {
	case StateOffered, StateActive:
	case StateSubmitted, StateCollapsed:
		return refuse("time out", in.State, ErrAlreadyDecided)
	default:
		return refuse("time out", in.State, ErrNotOpen)
	}
	if in.DeadlineAt.IsZero() {
		return refuse("time out", in.State, errors.New("it has no deadline"))
	}
	if now.Before(in.DeadlineAt) {
		return refuse("time out", in.State, fmt.Errorf("its deadline %s has not passed", in.DeadlineAt.Format(time.RFC3339)))
	}
	in.record(now, actorSystem, StateTimedOut, fmt.Sprintf("no decision within %s", in.Timeout), nil)
	return nil
}

// ApproveOnTimeout applies the TimeoutApprove policy at the deadline: the
// instance approves itself (By ByTimeout), as Decide with Approve would, so
// a required field left empty refuses it with a *ValidationError. It
// refuses an instance without that policy, or before its deadline.
func (in *Instance) ApproveOnTimeout(now time.Time) error {
	if in.OnTimeout != TimeoutApprove {
		return refuse("approve on timeout", in.State, errors.New("it does not approve itself on timeout"))
	}
	if in.DeadlineAt.IsZero() || now.Before(in.DeadlineAt) {
		return refuse("approve on timeout", in.State, fmt.Errorf("its deadline %s has not passed", in.DeadlineAt.Format(time.RFC3339)))
	}
	return in.Decide(Decision{Action: Approve, By: ByTimeout, At: now, Note: "nobody decided by the deadline, so it approved itself as its definition says"})
}

// Skip passes over an optional instance: pending, offered, active, failed or
// timed_out → skipped. A required instance refuses with
// ErrCannotSkipRequired.
func (in *Instance) Skip(now time.Time, actor, reason string) error {
	switch in.State {
	case StatePending, StateOffered, StateActive, StateFailed, StateTimedOut:
	case StateSubmitted, StateCollapsed:
		return refuse("skip", in.State, ErrAlreadyDecided)
	default:
		return refuse("skip", in.State, nil)
	}
	if in.Required {
		return refuse("skip", in.State, ErrCannotSkipRequired)
	}
	note := "skipped"
	if r := strings.TrimSpace(reason); r != "" {
		note += ": " + r
	}
	in.record(now, actor, StateSkipped, note, nil)
	return nil
}

// Fail records that the instance could not be offered or shown (e.g. posting
// to Slack failed): pending, offered or active → failed, with LastError set.
// It may be offered again while CanRetry.
func (in *Instance) Fail(now time.Time, reason string) error {
	switch in.State {
	case StatePending, StateOffered, StateActive:
	case StateSubmitted, StateCollapsed:
		return refuse("fail", in.State, ErrAlreadyDecided)
	default:
		return refuse("fail", in.State, nil)
	}
	in.LastError = reason
	note := "failed"
	if reason != "" {
		note += ": " + reason
	}
	in.record(now, actorSystem, StateFailed, note, nil)
	return nil
}

// allows reports whether the instance offers action a; no actions means all
// three, as for a definition.
func (in *Instance) allows(a Action) bool {
	return Definition{Actions: in.Actions}.Allows(a)
}

// CanRetry reports whether another Offer is allowed: the instance is not
// final and has been offered at most MaxRetries times (Attempt <=
// MaxRetries). Asked of an open instance, it answers whether it could be
// offered again should it fail or time out.
func (in *Instance) CanRetry() bool {
	return !in.Final() && in.Attempt <= max(in.MaxRetries, 0)
}

// Open reports whether the instance is waiting for a person (offered or
// active).
func (in *Instance) Open() bool {
	return in.State == StateOffered || in.State == StateActive
}

// Final reports whether the instance reached an end state: submitted,
// collapsed or skipped.
func (in *Instance) Final() bool {
	return in.State == StateSubmitted || in.State == StateCollapsed || in.State == StateSkipped
}

// cloneFields deep-copies fields so an instance never shares them with its
// definition.
func cloneFields(fields []Field) []Field {
	if fields == nil {
		return nil
	}
	out := make([]Field, len(fields))
	for i, f := range fields {
		f.Options = slices.Clone(f.Options)
		if f.Min != nil {
			v := *f.Min
			f.Min = &v
		}
		if f.Max != nil {
			v := *f.Max
			f.Max = &v
		}
		f.Default = cloneValue(f.Default)
		out[i] = f
	}
	return out
}

// cloneValue copies the slices and maps a field value may hold.
func cloneValue(v any) any {
	switch x := v.(type) {
	case []string:
		return slices.Clone(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case map[string]any:
		return cloneValues(x)
	}
	return v
}

func cloneValues(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}
