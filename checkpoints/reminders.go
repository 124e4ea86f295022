package checkpoints

import (
	"fmt"
	"time"
)

// Escalation is who is told, once, when a required checkpoint has waited
// through all its reminders.
type Escalation string

// The escalations.
const (
	// EscalateAdmins, the default: a direct message to each admin
	// (SLACK_ADMINS); with no admins configured, to the requester.
	EscalateAdmins Escalation = "admins"
	// EscalateRequester: a direct message to the person who started the run.
	EscalateRequester Escalation = "requester"
	// EscalateNone: nobody beyond the thread; the reminders just stop.
	EscalateNone Escalation = "none"
)

// Escalations lists every escalation, in a stable order.
func Escalations() []Escalation {
	return []Escalation{EscalateAdmins, EscalateRequester, EscalateNone}
}

// ReminderPolicy is how a required checkpoint that nobody decides is
// chased: Count reminders, the k-th gap Timeout×Factor^k capped at
// MaxInterval, then one escalation, then silence. The run keeps waiting
// after that: a person may still decide, and an admin may skip it.
type ReminderPolicy struct {
	// Count is how many reminders are posted after the first deadline
	// (0: none; the first deadline escalates at once).
	Count int `json:"count"`
	// Factor multiplies the gap after each reminder (1: a fixed interval).
	Factor int `json:"backoff_factor"`
	// MaxInterval caps a gap (0: no cap beyond the total bound).
	MaxInterval time.Duration `json:"max_interval"`
	// Escalate is who is told when the reminders are used up.
	Escalate Escalation `json:"escalate"`
}

// Defaults and bounds of a reminder policy: with a 1 h timeout, reminders
// at 1 h, 3 h and 7 h after the offer, the escalation at 15 h, then nothing.
const (
	DefaultReminderCount       = 3
	DefaultReminderFactor      = 2
	DefaultReminderMaxInterval = 24 * time.Hour
	MaxReminderCount           = 20
	MaxReminderFactor          = 10
	// MaxReminderSpan bounds the time from the offer to the escalation.
	MaxReminderSpan = 60 * 24 * time.Hour
)

// DefaultReminders is the policy of a definition (or a stored instance)
// that states none: 3 reminders backing off ×2, capped at a day, then the
// admins are told.
func DefaultReminders() ReminderPolicy {
	return ReminderPolicy{Count: DefaultReminderCount, Factor: DefaultReminderFactor, MaxInterval: DefaultReminderMaxInterval, Escalate: EscalateAdmins}
}

// ReminderPolicy is d's reminder policy, the default when it states none.
func (d Definition) ReminderPolicy() ReminderPolicy {
	if d.Reminders == nil {
		return DefaultReminders()
	}
	return *d.Reminders
}

// ReminderPolicy is the policy the instance was made with, the default for
// an instance stored before policies existed.
func (in *Instance) ReminderPolicy() ReminderPolicy {
	if in.Reminders == nil {
		return DefaultReminders()
	}
	return *in.Reminders
}

// Gap is the wait after the k-th reminder (k ≥ 1) until the next one (or
// the escalation): timeout×Factor^k, at most MaxInterval unless that is
// shorter than the timeout (backing off never shortens a gap); the wait
// before the first reminder is the timeout itself (k = 0).
func (p ReminderPolicy) Gap(timeout time.Duration, k int) time.Duration {
	limit := max(p.MaxInterval, timeout)
	if p.MaxInterval <= 0 {
		limit = max(MaxReminderSpan+1, timeout) // bounded only by the span (and overflow)
	}
	gap := timeout
	for range k {
		if gap >= limit {
			break
		}
		gap *= time.Duration(max(p.Factor, 1))
	}
	return min(gap, limit)
}

// Schedule lists, as offsets from the first offer, when each reminder is
// posted and, last, when the escalation is: Count+1 offsets.
func (p ReminderPolicy) Schedule(timeout time.Duration) []time.Duration {
	out := make([]time.Duration, 0, p.Count+1)
	var at time.Duration
	for k := 0; k <= p.Count && k <= MaxReminderCount; k++ {
		at += p.Gap(timeout, k)
		out = append(out, at)
	}
	return out
}

// RemindersLeft reports whether the instance's policy allows another
// reminder; when not, its next deadline stops the reminders.
func (in *Instance) RemindersLeft() bool {
	return in.Reminded < in.ReminderPolicy().Count
}

// StopReminders records that the reminders of a timed-out instance are used
// up: it stays timed out — a person may still decide, an admin may skip it —
// with no deadline, so nothing more is posted. It returns
// ErrInvalidTransition in any other state, or once already stopped.
func (in *Instance) StopReminders(now time.Time) error {
	switch in.State {
	case StateTimedOut:
	case StateSubmitted, StateCollapsed:
		return refuse("stop reminders", in.State, ErrAlreadyDecided)
	default:
		return refuse("stop reminders", in.State, nil)
	}
	if !in.RemindersStoppedAt.IsZero() {
		return refuse("stop reminders", in.State, fmt.Errorf("they stopped at %s", in.RemindersStoppedAt.Format(time.RFC3339)))
	}
	in.DeadlineAt = time.Time{}
	in.RemindersStoppedAt = now
	in.record(now, actorSystem, StateTimedOut, fmt.Sprintf("reminders stopped after %d; escalated to %s", in.Reminded, in.ReminderPolicy().Escalate), nil)
	return nil
}

// reminderProblems lists what is wrong with d's reminder policy: counts and
// factors within their bounds, a known escalation, a cap no shorter than the
// timeout, and a schedule that escalates within MaxReminderSpan.
func reminderProblems(d Definition) []Problem {
	if d.Reminders == nil {
		return nil
	}
	p := *d.Reminders
	var ps []Problem
	add := func(path, format string, args ...any) {
		ps = append(ps, Problem{Path: "reminders." + path, Message: fmt.Sprintf(format, args...)})
	}
	if p.Count < 0 || p.Count > MaxReminderCount {
		add("count", "%d reminders: use 0 to %d", p.Count, MaxReminderCount)
	}
	if p.Factor < 1 || p.Factor > MaxReminderFactor {
		add("backoff_factor", "backoff factor %d: use 1 (a fixed interval) to %d", p.Factor, MaxReminderFactor)
	}
	if p.MaxInterval < 0 {
		add("max_interval_seconds", "max interval %s is negative (0 means no cap)", p.MaxInterval)
	}
	switch p.Escalate {
	case EscalateAdmins, EscalateRequester, EscalateNone:
	default:
		add("escalate", "unknown escalation %q (one of %s)", p.Escalate, joinNames(Escalations()))
	}
	if len(ps) == 0 && d.Timeout > 0 {
		if s := p.Schedule(min(d.Timeout, MaxReminderSpan+1)); s[len(s)-1] > MaxReminderSpan {
			add("count", "the reminders would last %s before the escalation, more than %s: fewer reminders, a smaller factor or a max interval", s[len(s)-1].Round(time.Hour), MaxReminderSpan)
		}
	}
	return ps
}

// RemindersDoc is a reminder policy in a definition document: the interval
// cap in whole seconds; keys left out take DefaultReminders' values.
type RemindersDoc struct {
	Count              *int       `json:"count"`
	BackoffFactor      *int       `json:"backoff_factor"`
	MaxIntervalSeconds *int64     `json:"max_interval_seconds"`
	Escalate           Escalation `json:"escalate"`
}

// remindersDocOf is p in a definition document's shape.
func remindersDocOf(p ReminderPolicy) *RemindersDoc {
	secs := int64(p.MaxInterval / time.Second)
	return &RemindersDoc{Count: &p.Count, BackoffFactor: &p.Factor, MaxIntervalSeconds: &secs, Escalate: p.Escalate}
}

// policy is the document's policy, with defaults for the keys left out.
func (doc RemindersDoc) policy() ReminderPolicy {
	p := DefaultReminders()
	if doc.Count != nil {
		p.Count = *doc.Count
	}
	if doc.BackoffFactor != nil {
		p.Factor = *doc.BackoffFactor
	}
	if doc.MaxIntervalSeconds != nil {
		p.MaxInterval = time.Duration(*doc.MaxIntervalSeconds) * time.Second
		switch secs := *doc.MaxIntervalSeconds; {
		case secs > int64(MaxReminderSpan/time.Second):
			p.MaxInterval = MaxReminderSpan + time.Second // refused by Validate, without overflow
		case secs < 0:
			p.MaxInterval = -time.Second
		}
	}
	if doc.Escalate != "" {
		p.Escalate = doc.Escalate
	}
	return p
}

// decodeReminders decodes the "reminders" object of a definition document.
func decodeReminders(raw []byte, doc *RemindersDoc) []Problem {
	return decodeObject("reminders", raw, map[string]any{
		"count": &doc.Count, "backoff_factor": &doc.BackoffFactor,
		"max_interval_seconds": &doc.MaxIntervalSeconds, "escalate": &doc.Escalate,
	})
}
