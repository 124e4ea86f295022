package checkpoints

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// testDef is an optional definition with a one-hour timeout and two retries.
func testDef() Definition {
	return Definition{
		ID:          "review",
		ControlType: "review",
		Label:       "Review",
		Position:    AfterPlanning,
		Modes:       []string{"*"},
		Required:    false,
		Timeout:     time.Hour,
		MaxRetries:  2,
		Enabled:     true,
		Fields: []Field{
			{Key: "title", Type: FieldText, Label: "Title", Required: true},
			{Key: "depth", Type: FieldSelect, Label: "Depth", Options: []Option{{Value: "quick"}, {Value: "standard"}}, Default: "standard"},
			{Key: "tags", Type: FieldChips, Label: "Tags"},
			{Key: "n", Type: FieldNumber, Label: "N", Min: ptr(1), Max: ptr(10)},
			{Key: "note", Type: FieldTextarea, Label: "Note"},
		},
	}
}

func newTestInstance() Instance {
	return NewInstance(testDef(), "ck1", "run1", json.RawMessage(`{"plan":"p"}`), nil, map[string]any{"title": "Old title", "tags": []any{"x"}}, t0)
}

// instanceIn builds an instance in state s through real transitions,
// deterministically (so two calls give equal instances).
func instanceIn(t *testing.T, s State) Instance {
	t.Helper()
	in := newTestInstance()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("building %s: %v", s, err)
		}
	}
	switch s {
	case StatePending:
	case StateOffered:
		must(in.Offer(at(time.Minute), "bot"))
	case StateActive:
		must(in.Offer(at(time.Minute), "bot"))
		must(in.Activate(at(2*time.Minute), "U1"))
	case StateSubmitted, StateCollapsed:
		must(in.Offer(at(time.Minute), "bot"))
		must(in.Decide(Decision{Action: Approve, By: "U1", At: at(3 * time.Minute)}))
		if s == StateCollapsed {
			must(in.Collapse(at(4 * time.Minute)))
		}
	case StateSkipped:
		must(in.Skip(at(time.Minute), "U1", "not needed"))
	case StateFailed:
		must(in.Fail(at(time.Minute), "slack: channel_not_found"))
	case StateTimedOut:
		must(in.Offer(at(time.Minute), "bot"))
		must(in.TimeOut(at(time.Minute + time.Hour)))
	default:
		t.Fatalf("unknown state %s", s)
	}
	if in.State != s {
		t.Fatalf("built %s, want %s", in.State, s)
	}
	return in
}

func allStates() []State {
	return []State{StatePending, StateOffered, StateActive, StateSubmitted, StateCollapsed, StateSkipped, StateFailed, StateTimedOut}
}

func TestLifecycleTable(t *testing.T) {
	later := at(10 * time.Hour) // after every deadline
	ops := map[string]func(in *Instance) error{
		"offer":    func(in *Instance) error { return in.Offer(later, "bot") },
		"activate": func(in *Instance) error { return in.Activate(later, "U2") },
		"decide":   func(in *Instance) error { return in.Decide(Decision{Action: Approve, By: "U2", At: later}) },
		"collapse": func(in *Instance) error { return in.Collapse(later) },
		"timeout":  func(in *Instance) error { return in.TimeOut(later) },
		"skip":     func(in *Instance) error { return in.Skip(later, "U2", "") },
		"fail":     func(in *Instance) error { return in.Fail(later, "boom") },
	}
	type want struct {
		to  State // "" when refused
		err error // the specific reason besides ErrInvalidTransition, if any
	}
	ok := func(s State) want { return want{to: s} }
	bad := want{}
	decided := want{err: ErrAlreadyDecided}
	notOpen := want{err: ErrNotOpen}
	table := map[string]map[State]want{
		"offer": {
			StatePending: ok(StateOffered), StateFailed: ok(StateOffered), StateTimedOut: ok(StateOffered),
			StateOffered: bad, StateActive: bad, StateSkipped: bad, StateSubmitted: decided, StateCollapsed: decided,
		},
		"activate": {
			StateOffered: ok(StateActive), StateActive: ok(StateActive),
			StatePending: notOpen, StateFailed: notOpen, StateTimedOut: notOpen, StateSkipped: notOpen,
			StateSubmitted: decided, StateCollapsed: decided,
		},
		"decide": {
			StateOffered: ok(StateSubmitted), StateActive: ok(StateSubmitted),
			StatePending: notOpen, StateFailed: notOpen, StateTimedOut: notOpen, StateSkipped: notOpen,
			StateSubmitted: decided, StateCollapsed: decided,
		},
		"collapse": {
			StateSubmitted: ok(StateCollapsed),
			StatePending:   bad, StateOffered: bad, StateActive: bad, StateCollapsed: bad, StateSkipped: bad, StateFailed: bad, StateTimedOut: bad,
		},
		"timeout": {
			StateOffered: ok(StateTimedOut), StateActive: ok(StateTimedOut),
			StatePending: notOpen, StateFailed: notOpen, StateTimedOut: notOpen, StateSkipped: notOpen,
			StateSubmitted: decided, StateCollapsed: decided,
		},
		"skip": {
			StatePending: ok(StateSkipped), StateOffered: ok(StateSkipped), StateActive: ok(StateSkipped),
			StateFailed: ok(StateSkipped), StateTimedOut: ok(StateSkipped),
			StateSkipped: bad, StateSubmitted: decided, StateCollapsed: decided,
		},
		"fail": {
			StatePending: ok(StateFailed), StateOffered: ok(StateFailed), StateActive: ok(StateFailed),
			StateFailed: bad, StateTimedOut: bad, StateSkipped: bad, StateSubmitted: decided, StateCollapsed: decided,
		},
	}
	for opName, row := range table {
		for _, s := range allStates() {
			w, listed := row[s]
			if !listed {
				t.Fatalf("table misses %s from %s", opName, s)
			}
			t.Run(opName+"/"+string(s), func(t *testing.T) {
				in := instanceIn(t, s)
				before := instanceIn(t, s)
				err := ops[opName](&in)
				if w.to == "" {
					if !errors.Is(err, ErrInvalidTransition) {
						t.Fatalf("err = %v, want ErrInvalidTransition", err)
					}
					if w.err != nil && !errors.Is(err, w.err) {
						t.Fatalf("err = %v, want %v", err, w.err)
					}
					if !reflect.DeepEqual(in, before) {
						t.Fatalf("refused %s changed the instance:\n got %+v\nwant %+v", opName, in, before)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s from %s: %v", opName, s, err)
				}
				if in.State != w.to {
					t.Fatalf("state = %s, want %s", in.State, w.to)
				}
				if w.to == s { // a no-op
					if !reflect.DeepEqual(in, before) {
						t.Fatalf("no-op %s changed the instance", opName)
					}
					return
				}
				if len(in.Audit) != len(before.Audit)+1 {
					t.Fatalf("audit has %d entries, want %d", len(in.Audit), len(before.Audit)+1)
				}
				last := in.Audit[len(in.Audit)-1]
				if last.From != s || last.To != w.to || !last.At.Equal(later) || last.Actor == "" {
					t.Fatalf("audit entry = %+v, want %s → %s at %v by someone", last, s, w.to, later)
				}
			})
		}
	}
}

func TestNewInstance(t *testing.T) {
	def := testDef()
	def.Actions = nil
	in := NewInstance(def, "ck1", "run1", json.RawMessage(`{"a":1}`), nil, map[string]any{"title": " T ", "tags": []any{"x", "y"}, "n": 3}, t0)
	if in.ID != "ck1" || in.RunID != "run1" || in.DefinitionID != "review" || in.ControlType != "review" || in.Label != "Review" {
		t.Fatalf("identity not copied: %+v", in)
	}
	if in.State != StatePending || in.Attempt != 0 || in.Required || in.MaxRetries != 2 || in.Timeout != time.Hour || !in.CreatedAt.Equal(t0) {
		t.Fatalf("lifecycle fields wrong: %+v", in)
	}
	if !reflect.DeepEqual(in.Actions, []Action{Approve, Edit, Reject}) {
		t.Fatalf("actions = %v, want all three", in.Actions)
	}
	wantValues := map[string]any{"title": "T", "tags": []string{"x", "y"}, "n": 3.0, "depth": "standard"}
	if !reflect.DeepEqual(in.Values, wantValues) {
		t.Fatalf("values = %#v, want %#v", in.Values, wantValues)
	}
	if len(in.Audit) != 1 || in.Audit[0].To != StatePending || in.Audit[0].From != "" || !in.Audit[0].At.Equal(t0) {
		t.Fatalf("audit = %+v, want one creation entry", in.Audit)
	}
	// The instance's fields are a copy: changing the definition changes nothing.
	def.Fields[1].Options[0].Value = "changed"
	*def.Fields[3].Min = 99
	if in.Fields[1].Options[0].Value != "quick" || *in.Fields[3].Min != 1 {
		t.Fatal("instance shares fields with its definition")
	}
}

func TestNewInstanceResolvedFieldsAndExplicitValues(t *testing.T) {
	def := testDef()
	def.Actions = []Action{Approve, Reject}
	fields := []Field{{Key: "pick", Type: FieldMultiSelect, Label: "Pick", Options: []Option{{Value: "s1"}, {Value: "s2"}}, Default: []any{"s1"}}}
	in := NewInstance(def, "ck", "run", nil, fields, map[string]any{"depth": "quick"}, t0)
	if len(in.Fields) != 1 || in.Fields[0].Key != "pick" {
		t.Fatalf("fields = %+v, want the resolved ones", in.Fields)
	}
	// Explicit values win over defaults; the default is normalised.
	want := map[string]any{"depth": "quick", "pick": []string{"s1"}}
	if !reflect.DeepEqual(in.Values, want) {
		t.Fatalf("values = %#v, want %#v", in.Values, want)
	}
	if !reflect.DeepEqual(in.Actions, []Action{Approve, Reject}) {
		t.Fatalf("actions = %v", in.Actions)
	}
}

func TestOfferSetsDeadline(t *testing.T) {
	in := newTestInstance()
	if err := in.Offer(at(time.Minute), "bot"); err != nil {
		t.Fatal(err)
	}
	if in.Attempt != 1 || !in.OfferedAt.Equal(at(time.Minute)) || !in.DeadlineAt.Equal(at(time.Minute+time.Hour)) {
		t.Fatalf("attempt %d offered %v deadline %v", in.Attempt, in.OfferedAt, in.DeadlineAt)
	}
	if !in.Open() || in.Final() {
		t.Fatal("an offered instance is open and not final")
	}

	def := testDef()
	def.Timeout = 0
	no := NewInstance(def, "ck", "run", nil, nil, nil, t0)
	if err := no.Offer(at(time.Minute), "bot"); err != nil {
		t.Fatal(err)
	}
	if !no.DeadlineAt.IsZero() {
		t.Fatalf("deadline = %v, want zero without a timeout", no.DeadlineAt)
	}
	if err := no.TimeOut(at(1000 * time.Hour)); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("TimeOut without deadline = %v, want ErrInvalidTransition", err)
	}
}

func TestTimeOutAroundDeadline(t *testing.T) {
	cases := []struct {
		name string
		now  time.Time
		ok   bool
	}{
		{"well before", at(time.Minute + 30*time.Minute), false},
		{"a nanosecond before", at(time.Minute + time.Hour - 1), false},
		{"exactly at", at(time.Minute + time.Hour), true},
		{"after", at(5 * time.Hour), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := instanceIn(t, StateOffered)
			err := in.TimeOut(c.now)
			if c.ok {
				if err != nil || in.State != StateTimedOut {
					t.Fatalf("err %v state %s, want timed_out", err, in.State)
				}
				if in.Decision != nil {
					t.Fatal("a timeout must not record a decision")
				}
				return
			}
			if !errors.Is(err, ErrInvalidTransition) || in.State != StateOffered {
				t.Fatalf("err %v state %s, want ErrInvalidTransition and still offered", err, in.State)
			}
		})
	}
}

func TestRetriesUntilExhausted(t *testing.T) {
	in := newTestInstance() // MaxRetries 2: three offers in all
	now := t0
	for attempt := 1; attempt <= 3; attempt++ {
		if !in.CanRetry() {
			t.Fatalf("CanRetry false before offer %d", attempt)
		}
		if err := in.Offer(now, "bot"); err != nil {
			t.Fatalf("offer %d: %v", attempt, err)
		}
		if in.Attempt != attempt {
			t.Fatalf("attempt = %d, want %d", in.Attempt, attempt)
		}
		now = in.DeadlineAt
		if attempt == 2 {
			if err := in.Fail(now, "render failed"); err != nil {
				t.Fatal(err)
			}
		} else if err := in.TimeOut(now); err != nil {
			t.Fatalf("timeout %d: %v", attempt, err)
		}
	}
	if in.CanRetry() {
		t.Fatal("CanRetry true after 1+MaxRetries offers")
	}
	auditLen := len(in.Audit)
	err := in.Offer(now, "bot")
	if !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("4th offer = %v, want ErrRetriesExhausted", err)
	}
	if in.State != StateTimedOut || in.Attempt != 3 || len(in.Audit) != auditLen {
		t.Fatalf("exhausted offer changed the instance: state %s attempt %d", in.State, in.Attempt)
	}
	if in.LastError != "render failed" {
		t.Fatalf("LastError = %q", in.LastError)
	}
	// A timed-out optional instance may still be skipped.
	if err := in.Skip(now, "bot", "no answer"); err != nil || !in.Final() {
		t.Fatalf("skip after exhaustion: %v", err)
	}
}

func TestSkipRequiredRefused(t *testing.T) {
	for _, s := range []State{StatePending, StateOffered, StateActive, StateFailed, StateTimedOut} {
		in := instanceIn(t, s)
		in.Required = true
		err := in.Skip(at(10*time.Hour), "U1", "")
		if !errors.Is(err, ErrCannotSkipRequired) || in.State != s {
			t.Errorf("skip required from %s = %v (state %s), want ErrCannotSkipRequired", s, err, in.State)
		}
	}
}

func TestDecideTwice(t *testing.T) {
	in := instanceIn(t, StateSubmitted)
	before := instanceIn(t, StateSubmitted)
	for _, a := range []Action{Approve, Edit, Reject} {
		err := in.Decide(Decision{Action: a, By: "U9", At: at(time.Hour), Values: map[string]any{"title": "New"}})
		if !errors.Is(err, ErrAlreadyDecided) {
			t.Fatalf("second %s = %v, want ErrAlreadyDecided", a, err)
		}
	}
	if !reflect.DeepEqual(in, before) {
		t.Fatal("a second decision changed the instance")
	}
}

func TestDecideRefusals(t *testing.T) {
	cases := []struct {
		name    string
		actions []Action
		d       Decision
		is      error
		msg     string
	}{
		{"action not allowed", []Action{Approve, Reject}, Decision{Action: Edit, By: "U1", At: at(time.Hour)}, ErrActionNotAllowed, ""},
		{"unknown action", nil, Decision{Action: "maybe", By: "U1", At: at(time.Hour)}, ErrActionNotAllowed, ""},
		{"no author", nil, Decision{Action: Approve, At: at(time.Hour)}, nil, "By"},
		{"no time", nil, Decision{Action: Approve, By: "U1"}, nil, "time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := instanceIn(t, StateOffered)
			in.Actions = c.actions
			before := instanceIn(t, StateOffered)
			before.Actions = c.actions
			err := in.Decide(c.d)
			if err == nil {
				t.Fatal("accepted")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			if c.msg != "" && !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want mention of %q", err, c.msg)
			}
			if !reflect.DeepEqual(in, before) {
				t.Fatal("a refused decision changed the instance")
			}
		})
	}
}

func TestDecideEditInvalidChangesNothing(t *testing.T) {
	in := instanceIn(t, StateActive)
	before := instanceIn(t, StateActive)
	err := in.Decide(Decision{Action: Edit, By: "U1", At: at(time.Hour), Values: map[string]any{
		"title": "  ", "depth": "deep", "n": 11, "bogus": 1,
	}})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	keys := map[string]bool{}
	for _, fe := range ve.Fields {
		keys[fe.Key] = true
	}
	for _, k := range []string{"title", "depth", "n", "bogus"} {
		if !keys[k] {
			t.Errorf("ValidationError lacks %q: %+v", k, ve.Fields)
		}
	}
	if errors.Is(err, ErrInvalidTransition) {
		t.Error("a validation failure is not a refused transition")
	}
	if !reflect.DeepEqual(in, before) {
		t.Fatal("an invalid edit changed the instance")
	}
}

func TestDecideEditRecordsChanges(t *testing.T) {
	in := instanceIn(t, StateActive)
	in.Values["note"] = "keep me? no"
	err := in.Decide(Decision{Action: Edit, By: "U1", At: at(time.Hour), Note: " tightened ", Values: map[string]any{
		"title": " New title ",
		"tags":  []any{"x", "z"},
		"n":     json.Number("4"),
		"note":  "", // cleared
		// depth absent: keeps its current value
	}})
	if err != nil {
		t.Fatal(err)
	}
	wantValues := map[string]any{"title": "New title", "tags": []string{"x", "z"}, "n": 4.0, "depth": "standard"}
	if !reflect.DeepEqual(in.Values, wantValues) {
		t.Fatalf("values = %#v, want %#v", in.Values, wantValues)
	}
	if in.Decision == nil || !reflect.DeepEqual(in.Decision.Values, wantValues) {
		t.Fatalf("decision values = %#v, want the normalised form", in.Decision)
	}
	if in.Decision.Note != "tightened" || in.Decision.By != "U1" || in.Decision.Action != Edit || !in.DecidedAt.Equal(at(time.Hour)) {
		t.Fatalf("decision = %+v decided %v", in.Decision, in.DecidedAt)
	}
	last := in.Audit[len(in.Audit)-1]
	wantChanges := []Change{
		{Key: "n", Before: nil, After: 4.0},
		{Key: "note", Before: "keep me? no", After: nil},
		{Key: "tags", Before: []string{"x"}, After: []string{"x", "z"}},
		{Key: "title", Before: "Old title", After: "New title"},
	}
	if !reflect.DeepEqual(last.Changes, wantChanges) {
		t.Fatalf("changes = %#v\nwant %#v", last.Changes, wantChanges)
	}
	if last.Actor != "U1" || last.From != StateActive || last.To != StateSubmitted || last.Note != "edit: tightened" {
		t.Fatalf("audit entry = %+v", last)
	}
	// The stored decision does not alias the instance's values.
	in.Values["title"] = "mutated"
	if in.Decision.Values["title"] != "New title" {
		t.Fatal("decision values alias instance values")
	}
}

func TestDecideApproveAndReject(t *testing.T) {
	cases := []struct {
		action   Action
		note     string
		wantNote string
	}{
		{Approve, "", "approve"},
		{Reject, "", "reject"},
		{Reject, "  wrong angle ", "reject: wrong angle"},
	}
	for _, c := range cases {
		in := instanceIn(t, StateOffered)
		valuesBefore := cloneValues(in.Values)
		err := in.Decide(Decision{Action: c.action, By: "U1", At: at(time.Hour), Note: c.note, Values: map[string]any{"title": "ignored"}})
		if err != nil {
			t.Fatal(err)
		}
		if in.State != StateSubmitted || in.Decision.Action != c.action || in.Decision.Values != nil {
			t.Fatalf("%s: state %s decision %+v", c.action, in.State, in.Decision)
		}
		if !reflect.DeepEqual(in.Values, valuesBefore) {
			t.Fatalf("%s changed values", c.action)
		}
		last := in.Audit[len(in.Audit)-1]
		if last.Note != c.wantNote || last.Changes != nil {
			t.Fatalf("%s audit = %+v, want note %q", c.action, last, c.wantNote)
		}
	}
}

func TestDecideAfterDeadlineBeforeTimeOut(t *testing.T) {
	in := instanceIn(t, StateOffered)
	if err := in.Decide(Decision{Action: Approve, By: "U1", At: in.DeadlineAt.Add(time.Minute)}); err != nil {
		t.Fatalf("late decision on an open instance refused: %v", err)
	}
	if err := in.TimeOut(in.DeadlineAt.Add(2 * time.Minute)); !errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("timeout after decision = %v, want ErrAlreadyDecided", err)
	}
}

func TestStatePredicates(t *testing.T) {
	cases := map[State]struct{ open, final, canRetry bool }{
		StatePending:   {false, false, true},
		StateOffered:   {true, false, true},
		StateActive:    {true, false, true},
		StateSubmitted: {false, true, false},
		StateCollapsed: {false, true, false},
		StateSkipped:   {false, true, false},
		StateFailed:    {false, false, true},
		StateTimedOut:  {false, false, true},
	}
	for s, w := range cases {
		in := instanceIn(t, s)
		if in.Open() != w.open || in.Final() != w.final || in.CanRetry() != w.canRetry {
			t.Errorf("%s: open %v final %v canRetry %v, want %+v", s, in.Open(), in.Final(), in.CanRetry(), w)
		}
	}
}

func TestActivateNoOpHasNoAudit(t *testing.T) {
	in := instanceIn(t, StateActive)
	n := len(in.Audit)
	if err := in.Activate(at(time.Hour), "U3"); err != nil || len(in.Audit) != n {
		t.Fatalf("re-activate: err %v, audit %d → %d", err, n, len(in.Audit))
	}
}

func TestErrorMessagesNameTheState(t *testing.T) {
	in := instanceIn(t, StateCollapsed)
	err := in.Decide(Decision{Action: Approve, By: "U1", At: at(time.Hour)})
	if err == nil || !strings.Contains(err.Error(), "collapsed") || !strings.Contains(err.Error(), "already decided") {
		t.Fatalf("error %q should say the state and the reason", err)
	}
}

func TestApproveWithAnEmptyRequiredFieldIsRefusedWithTheFieldNamed(t *testing.T) {
	def := testDef()
	def.Fields = append(def.Fields, Field{Key: "ok", Type: FieldCheckbox, Label: "Checked", Required: true})
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   []string // the keys refused; none: approved
	}{
		{"empty", map[string]any{"title": "  "}, []string{"title", "ok"}},
		{"absent and unchecked", map[string]any{"ok": false}, []string{"title", "ok"}},
		{"filled", map[string]any{"title": "T", "ok": true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInstance(def, "ck1", "run1", nil, nil, tc.values, t0)
			if err := in.Offer(at(time.Minute), "bot"); err != nil {
				t.Fatal(err)
			}
			before := in.State
			err := in.Decide(Decision{Action: Approve, By: "U1", At: at(2 * time.Minute)})
			var ve *ValidationError
			if len(tc.want) == 0 {
				if err != nil || in.State != StateSubmitted {
					t.Fatalf("approve refused: %v (state %s)", err, in.State)
				}
				return
			}
			if !errors.As(err, &ve) {
				t.Fatalf("approve: %v, want a validation error", err)
			}
			var keys []string
			for _, fe := range ve.Fields {
				keys = append(keys, fe.Key)
				if !strings.Contains(fe.Message, "required") {
					t.Errorf("message %q", fe.Message)
				}
			}
			if !reflect.DeepEqual(keys, tc.want) || in.State != before || in.Decision != nil {
				t.Fatalf("refused %v (want %v); state %s, decision %+v", keys, tc.want, in.State, in.Decision)
			}
		})
	}
}

func TestApproveOnTimeout(t *testing.T) {
	def := testDef()
	def.OnTimeout = TimeoutApprove
	in := NewInstance(def, "ck1", "run1", nil, nil, map[string]any{"title": "T"}, t0)
	if err := in.Offer(t0, "bot"); err != nil {
		t.Fatal(err)
	}
	if err := in.ApproveOnTimeout(in.DeadlineAt.Add(-time.Second)); err == nil {
		t.Fatal("approved itself before its deadline")
	}
	if err := in.ApproveOnTimeout(in.DeadlineAt); err != nil {
		t.Fatal(err)
	}
	if in.Decision == nil || in.Decision.By != ByTimeout || in.Decision.Action != Approve || in.State != StateSubmitted {
		t.Fatalf("state %s, decision %+v", in.State, in.Decision)
	}
	empty := NewInstance(def, "ck2", "run1", nil, nil, nil, t0)
	_ = empty.Offer(t0, "bot")
	var ve *ValidationError
	if err := empty.ApproveOnTimeout(empty.DeadlineAt); !errors.As(err, &ve) || empty.Decision != nil {
		t.Fatalf("approved itself with its required title empty: %v", err)
	}
	plain := NewInstance(testDef(), "ck3", "run1", nil, nil, map[string]any{"title": "T"}, t0)
	_ = plain.Offer(t0, "bot")
	if err := plain.ApproveOnTimeout(plain.DeadlineAt); err == nil {
		t.Fatal("a checkpoint without the policy approved itself")
	}
}

func TestTimeoutPolicyInDefinitions(t *testing.T) {
	for _, tc := range []struct {
		policy  TimeoutPolicy
		timeout time.Duration
		ok      bool
	}{
		{TimeoutRemind, 0, true}, {TimeoutApprove, time.Hour, true}, {TimeoutApprove, 0, false}, {"reject", time.Hour, false},
	} {
		d := testDef()
		d.OnTimeout, d.Timeout = tc.policy, tc.timeout
		probs := DefinitionProblems(d)
		if (len(probs) == 0) != tc.ok {
			t.Errorf("policy %q timeout %s: problems %v", tc.policy, tc.timeout, probs)
		}
	}
}
