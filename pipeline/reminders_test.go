package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestRemindersBackOffEscalateOnceThenStop: a required checkpoint with a
// 1 h timeout is reminded at the backed-off times of its policy, exactly
// its count, never early; then escalated once; then nothing more is posted
// over ten days, while the run still waits and a decision still counts. An
// instance stored before policies existed follows the default.
func TestRemindersBackOffEscalateOnceThenStop(t *testing.T) {
	h := time.Hour
	for _, tc := range []struct {
		name   string
		policy *checkpoints.ReminderPolicy // of the definition
		strip  bool                        // remove the policy from the stored instance (an old run)
		want   []time.Duration             // offsets from the offer: the reminders, then the escalation
	}{
		{name: "the default policy", want: []time.Duration{h, 3 * h, 7 * h, 15 * h}},
		{name: "its definition's policy", policy: &checkpoints.ReminderPolicy{Count: 2, Factor: 3, MaxInterval: 5 * h, Escalate: checkpoints.EscalateRequester},
			want: []time.Duration{h, 4 * h, 9 * h}},
		{name: "an old run with no policy stored gets the default", strip: true,
			policy: &checkpoints.ReminderPolicy{Count: 1, Factor: 1, Escalate: checkpoints.EscalateNone},
			want:   []time.Duration{h, 3 * h, 7 * h, 15 * h}},
		{name: "no reminders: escalated at the timeout", policy: &checkpoints.ReminderPolicy{Count: 0, Factor: 1, Escalate: checkpoints.EscalateAdmins},
			want: []time.Duration{h}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f, _ := newFlow(t, passes)
			c := custom("budget_check", checkpoints.AfterPlanning, 20, true)
			c.Timeout, c.MaxRetries, c.Reminders = h, 1, tc.policy
			f.define(c)
			f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
			f.approve(checkpoints.PlanReview)
			inst := f.at("budget_check")
			offered := f.clock.Now()
			if tc.strip {
				r := f.run()
				r.Instance(inst.ID).Reminders = nil
				if err := f.store.Save(ctx, r); err != nil {
					t.Fatal(err)
				}
				if f.at("budget_check").Reminders != nil {
					t.Fatal("the policy is still stored")
				}
			}
			posts := func() int {
				f.pres.mu.Lock()
				defer f.pres.mu.Unlock()
				return f.pres.offers
			}
			stopped := func() []string {
				f.pres.mu.Lock()
				defer f.pres.mu.Unlock()
				return slices.Clone(f.pres.stopped)
			}
			var got []time.Duration
			for range 30 {
				cur := f.at("budget_check")
				if cur.DeadlineAt.IsZero() {
					break
				}
				before, esc := posts(), len(stopped())
				// A worker's advance a second early does nothing: the run
				// keeps its deadline (in the store's index of deadlines).
				f.clock.Advance(cur.DeadlineAt.Sub(f.clock.Now()) - time.Second)
				if err := f.eng.Advance(ctx, "r-1"); err != nil {
					t.Fatal(err)
				}
				if posts() != before || len(stopped()) != esc {
					t.Fatalf("something was posted a second before the deadline %v", cur.DeadlineAt.Sub(offered))
				}
				if d := f.run().Deadline(); !d.Equal(cur.DeadlineAt) {
					t.Fatalf("a second before the deadline %v the run's deadline moved to %v", cur.DeadlineAt.Sub(offered), d.Sub(offered))
				}
				// At the deadline, the worker the deadline sends advances it.
				f.clock.Advance(time.Second)
				if err := f.eng.Advance(ctx, "r-1"); err != nil {
					t.Fatal(err)
				}
				switch {
				case posts() == before+1 && len(stopped()) == esc:
					got = append(got, f.clock.Now().Sub(offered))
				case posts() == before && len(stopped()) == esc+1:
					got = append(got, f.clock.Now().Sub(offered))
				default:
					t.Fatalf("at %v: %d posts and %d escalations, want one of them", f.clock.Now().Sub(offered), posts()-before, len(stopped())-esc)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("reminded and escalated at %v, want %v", got, tc.want)
			}
			if s := stopped(); len(s) != 1 || s[0] != inst.ID {
				t.Fatalf("escalations %v, want one of %s", s, inst.ID)
			}
			// Ten days later, advanced by a worker every day, nothing more.
			final := posts()
			for range 10 {
				f.clock.Advance(24 * h)
				f.advance()
			}
			cur := f.at("budget_check")
			if posts() != final || len(stopped()) != 1 {
				t.Fatalf("after ten days: %d more posts, %d escalations", posts()-final, len(stopped()))
			}
			if cur.State != checkpoints.StateTimedOut || cur.RemindersStoppedAt.IsZero() || cur.Reminded != len(tc.want)-1 {
				t.Fatalf("state %s, stopped at %v, reminded %d; want timed out (still waiting), stopped, %d reminders", cur.State, cur.RemindersStoppedAt, cur.Reminded, len(tc.want)-1)
			}
			if r := f.run(); r.Status != pipeline.StatusWaiting || !r.Deadline().IsZero() {
				t.Fatalf("the run is %s with deadline %v, want waiting without one", r.Status, r.Deadline())
			}
			// A person may still decide.
			f.approve("budget_check")
			if cur := f.run().Instance(inst.ID); cur.Decision == nil || cur.Decision.Action != checkpoints.Approve {
				t.Fatalf("a late decision did not count: %+v", cur.Decision)
			}
		})
	}
}

// TestAnAdminCanGoOnWithoutACheckpointWhoseRemindersStopped: "continue
// without it" is refused while reminders are still due, and passes over a
// required checkpoint nobody decided through its reminders, with a caveat.
func TestAnAdminCanGoOnWithoutACheckpointWhoseRemindersStopped(t *testing.T) {
	ctx := context.Background()
	f, _ := newFlow(t, passes)
	c := custom("budget_check", checkpoints.AfterPlanning, 20, true)
	c.Timeout, c.MaxRetries = time.Hour, 0
	c.Reminders = &checkpoints.ReminderPolicy{Count: 1, Factor: 1, Escalate: checkpoints.EscalateAdmins}
	f.define(c)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
	f.approve(checkpoints.PlanReview)
	for i := range 2 {
		inst := f.at("budget_check")
		if _, err := f.eng.ContinueWithout(ctx, inst.ID, "U0ADMIN01"); !errors.Is(err, pipeline.ErrNotStranded) {
			t.Fatalf("continue without it while a reminder is due (%d): %v, want ErrNotStranded", i, err)
		}
		f.clock.Advance(inst.DeadlineAt.Sub(f.clock.Now()))
		if err := f.eng.Advance(ctx, "r-1"); err != nil {
			t.Fatal(err)
		}
	}
	inst := f.at("budget_check")
	if inst.RemindersStoppedAt.IsZero() {
		t.Fatalf("reminders did not stop: reminded %d", inst.Reminded)
	}
	if _, err := f.eng.ContinueWithout(ctx, inst.ID, "U0ADMIN01"); err != nil {
		t.Fatal(err)
	}
	r := f.advance()
	if got := r.Instance(inst.ID); got.State != checkpoints.StateSkipped {
		t.Fatalf("state %s, want skipped", got.State)
	}
	if !slices.ContainsFunc(r.ReviewNotes, func(n string) bool {
		return strings.Contains(n, "through all its reminders (1)") && strings.Contains(n, "U0ADMIN01")
	}) {
		t.Fatalf("the caveats %q do not say who went on without it and why", r.ReviewNotes)
	}
}

// TestAFailedEscalationIsTriedAgainLater: the escalation of a checkpoint
// whose reminders are used up fails (Slack unavailable longer than the
// presenter's own retries); it is tried again on the run's durable timer,
// backing off (1, 4, 16 min, then hourly), never early, until it is made —
// or, failing every time, given up after EscalationAttempts, saying so in
// the trace. Then nothing more happens for ten days, and the run waits.
func TestAFailedEscalationIsTriedAgainLater(t *testing.T) {
	h, m := time.Hour, time.Minute
	for _, tc := range []struct {
		name  string
		fails int
		want  []time.Duration // offsets from the offer of each escalation tried
		made  bool
	}{
		{name: "made on the fourth try", fails: 3, want: []time.Duration{h, h + m, h + 5*m, h + 21*m}, made: true},
		{name: "failing every time: given up", fails: 100,
			want: []time.Duration{h, h + m, h + 5*m, h + 21*m, 2*h + 21*m, 3*h + 21*m, 4*h + 21*m, 5*h + 21*m}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f, _ := newFlow(t, passes)
			f.pres.stopFails = tc.fails
			c := custom("budget_check", checkpoints.AfterPlanning, 20, true)
			c.Timeout, c.MaxRetries = h, 1
			c.Reminders = &checkpoints.ReminderPolicy{Count: 0, Factor: 1, Escalate: checkpoints.EscalateAdmins}
			f.define(c)
			f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
			f.approve(checkpoints.PlanReview)
			f.at("budget_check")
			offered := f.clock.Now()
			calls := func() int {
				f.pres.mu.Lock()
				defer f.pres.mu.Unlock()
				return f.pres.stopCalls
			}
			var got []time.Duration
			for range 20 {
				d := f.run().Deadline()
				if d.IsZero() {
					break
				}
				before := calls()
				f.clock.Advance(d.Sub(f.clock.Now()) - time.Second)
				if err := f.eng.Advance(ctx, "r-1"); err != nil {
					t.Fatal(err)
				}
				if calls() != before {
					t.Fatalf("escalated a second before %v", d.Sub(offered))
				}
				if got := f.run().Deadline(); !got.Equal(d) {
					t.Fatalf("a second before %v the run's deadline moved to %v", d.Sub(offered), got.Sub(offered))
				}
				f.clock.Advance(time.Second)
				if err := f.eng.Advance(ctx, "r-1"); err != nil {
					t.Fatal(err)
				}
				if calls() != before+1 {
					t.Fatalf("at %v: %d escalations, want 1", f.clock.Now().Sub(offered), calls()-before)
				}
				got = append(got, f.clock.Now().Sub(offered))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("escalations tried at %v, want %v", got, tc.want)
			}
			if len(tc.want) > pipeline.EscalationAttempts {
				t.Fatalf("tried %d times, the bound is %d", len(tc.want), pipeline.EscalationAttempts)
			}
			f.pres.mu.Lock()
			made := len(f.pres.stopped) == 1
			f.pres.mu.Unlock()
			if made != tc.made {
				t.Fatalf("escalation made: %v, want %v", made, tc.made)
			}
			final := calls()
			for range 10 { // advanced by a worker every day
				f.clock.Advance(24 * h)
				f.advance()
			}
			r := f.run()
			if calls() != final || r.EscalationRetry != nil || !r.Deadline().IsZero() || r.Status != pipeline.StatusWaiting {
				t.Fatalf("after ten days: %d more escalations, retry %+v, deadline %v, status %s", calls()-final, r.EscalationRetry, r.Deadline(), r.Status)
			}
			trace := ""
			for _, e := range r.Trace {
				trace += e.Message + "\n"
			}
			if want := map[bool]string{true: "escalated on attempt 4", false: "escalation failed 8 times"}[tc.made]; !strings.Contains(trace, want) {
				t.Fatalf("the trace does not say %q:\n%s", want, trace)
			}
		})
	}
}
