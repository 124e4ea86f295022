package checkpoints

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReminderScheduleBacksOffAndIsCapped(t *testing.T) {
	h := time.Hour
	for _, tc := range []struct {
		name    string
		p       ReminderPolicy
		timeout time.Duration
		want    []time.Duration
	}{
		{"the default with a 1 h timeout: 1, 3, 7 h, escalation at 15 h", DefaultReminders(), h, []time.Duration{h, 3 * h, 7 * h, 15 * h}},
		{"capped at 3 h", ReminderPolicy{Count: 4, Factor: 2, MaxInterval: 3 * h}, h, []time.Duration{h, 3 * h, 6 * h, 9 * h, 12 * h}},
		{"a fixed interval", ReminderPolicy{Count: 2, Factor: 1}, 30 * time.Minute, []time.Duration{30 * time.Minute, h, 90 * time.Minute}},
		{"no reminders: the escalation at the timeout", ReminderPolicy{Count: 0, Factor: 2}, 2 * h, []time.Duration{2 * h}},
		{"a cap below the timeout never shortens a gap", ReminderPolicy{Count: 2, Factor: 3, MaxInterval: h}, 48 * h, []time.Duration{48 * h, 96 * h, 144 * h}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Schedule(tc.timeout); !slices.Equal(got, tc.want) {
				t.Fatalf("schedule %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReminderPolicyValidation(t *testing.T) {
	base := Definition{ID: "d", ControlType: "d", Label: "D", Position: AfterPlanning, Modes: []string{"*"}, Actions: []Action{Approve, Reject}, Required: true, Timeout: time.Hour}
	for _, tc := range []struct {
		name string
		p    ReminderPolicy
		want string // a path with a problem, "" for none
	}{
		{"the default", DefaultReminders(), ""},
		{"none, told nobody", ReminderPolicy{Count: 0, Factor: 1, Escalate: EscalateNone}, ""},
		{"a negative count", ReminderPolicy{Count: -1, Factor: 2, Escalate: EscalateAdmins}, "reminders.count"},
		{"too many reminders", ReminderPolicy{Count: MaxReminderCount + 1, Factor: 1, Escalate: EscalateAdmins}, "reminders.count"},
		{"a zero factor", ReminderPolicy{Count: 3, Factor: 0, Escalate: EscalateAdmins}, "reminders.backoff_factor"},
		{"an absurd factor", ReminderPolicy{Count: 3, Factor: 1000, Escalate: EscalateAdmins}, "reminders.backoff_factor"},
		{"a negative cap", ReminderPolicy{Count: 3, Factor: 2, MaxInterval: -time.Hour, Escalate: EscalateAdmins}, "reminders.max_interval_seconds"},
		{"an unknown escalation", ReminderPolicy{Count: 3, Factor: 2, Escalate: "everyone"}, "reminders.escalate"},
		{"an absurd total: 20 reminders ×10 without a cap", ReminderPolicy{Count: 20, Factor: 10, Escalate: EscalateAdmins}, "reminders.count"},
		{"an absurd total: 20 reminders, up to a week apart", ReminderPolicy{Count: 20, Factor: 2, MaxInterval: 7 * 24 * time.Hour, Escalate: EscalateAdmins}, "reminders.count"},
		{"5 reminders backing off to a day", ReminderPolicy{Count: 5, Factor: 2, MaxInterval: 24 * time.Hour, Escalate: EscalateRequester}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			d.Reminders = &tc.p
			var paths []string
			for _, p := range DefinitionProblems(d) {
				paths = append(paths, p.Path)
			}
			if tc.want == "" && len(paths) > 0 || tc.want != "" && !slices.Contains(paths, tc.want) {
				t.Fatalf("problems at %v, want %q", paths, tc.want)
			}
		})
	}
}

func TestReminderPolicyInTheDocument(t *testing.T) {
	doc := `{"control_type":"budget","label":"Budget","pipeline_position":"after_planning","required":true,"actions":["approve","reject"],
		"timeout_seconds":3600,"reminders":{"count":2,"max_interval_seconds":7200,"escalate":"requester"}}`
	_, d, err := ParseDocument([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := ReminderPolicy{Count: 2, Factor: DefaultReminderFactor, MaxInterval: 2 * time.Hour, Escalate: EscalateRequester}
	if d.Reminders == nil || *d.Reminders != want {
		t.Fatalf("policy %+v, want %+v (keys left out take the defaults)", d.Reminders, want)
	}
	in := NewInstance(d, "c1", "r1", nil, nil, nil, time.Time{})
	if in.ReminderPolicy() != want {
		t.Fatalf("the instance carries %+v, want %+v", in.ReminderPolicy(), want)
	}
	if out := DocumentOf(Definition{Timeout: time.Hour}); out.Reminders == nil || *out.Reminders.Count != DefaultReminderCount || out.Reminders.Escalate != EscalateAdmins {
		t.Fatalf("a definition without a policy shows %+v, want the default", out.Reminders)
	}
	_, _, err = ParseDocument([]byte(strings.Replace(doc, `"count":2`, `"count":-3,"every":"1h"`, 1)))
	if err == nil || !strings.Contains(err.Error(), "reminders.count") || !strings.Contains(err.Error(), "reminders.every: unknown key") {
		t.Fatalf("a nonsense policy: %v", err)
	}
}
