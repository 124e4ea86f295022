package pipeline

import (
	"context"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// An escalation (Presenter.RemindersStopped: a checkpoint's reminders are
// used up, and whom its reminder policy names are told) that fails is tried
// again later, on a durable timer, backing off: the presenter retries a
// transient failure in place for a few seconds, and a Slack outage or a
// missing scope lasts longer than that. Presenters send each recipient's
// message once (they remember what they sent), so trying again sends only
// what is still missing.
const (
	// EscalationAttempts bounds the escalations of one checkpoint: the first
	// and the retries after it failed.
	EscalationAttempts = 8
	// escalationFirstWait is the wait after the first failure; each next
	// wait is four times longer, up to escalationMaxWait (1, 4, 16, 60, 60,
	// 60, 60 min: about 4 h 20 min from the first failure to the last try).
	escalationFirstWait = time.Minute
	escalationMaxWait   = time.Hour
)

// EscalationRetry is an escalation that failed and waits to be tried again.
type EscalationRetry struct {
	// Checkpoint is the id of the checkpoint instance whose escalation failed.
	Checkpoint string `json:"checkpoint"`
	// Attempt counts the escalations made so far (all failed).
	Attempt int `json:"attempt"`
	// At is when it is tried again.
	At time.Time `json:"at"`
	// Error is the last failure, for the trace and the logs.
	Error string `json:"error,omitempty"`
}

// escalationWait is the wait after the attempt-th failed escalation.
func escalationWait(attempt int) time.Duration {
	d := escalationFirstWait
	for range attempt - 1 {
		if d *= 4; d >= escalationMaxWait {
			return escalationMaxWait
		}
	}
	return d
}

// escalationRetryOf returns the escalation retry of inst, the checkpoint
// the run waits at with its reminders stopped, or nil.
func (r *Run) escalationRetryOf(inst *checkpoints.Instance) *EscalationRetry {
	if er := r.EscalationRetry; er != nil && inst != nil && er.Checkpoint == inst.ID &&
		inst.State == checkpoints.StateTimedOut && !inst.RemindersStoppedAt.IsZero() {
		return er
	}
	return nil
}

// escalate tells the presenter that inst's reminders are used up (attempt
// counts this escalation among those made). When it fails, it is tried
// again after a backed-off wait while attempts last (the retry is saved
// with the run, and its time is the run's deadline, a durable timer);
// when it succeeds, or the attempts are used up, the retry is cleared.
func (e *Engine) escalate(ctx context.Context, r *Run, inst *checkpoints.Instance, attempt int) error {
	id := inst.ID
	err := e.presenter(r).RemindersStopped(ctx, r, inst)
	now := e.cfg.Clock.Now()
	if err == nil {
		if attempt > 1 {
			e.log.Info("a checkpoint's escalation was made on a later attempt", "run", r.ID, "checkpoint", id, "attempt", attempt)
		}
		return e.update(ctx, r, func(r *Run) bool {
			if r.EscalationRetry == nil || r.EscalationRetry.Checkpoint != id {
				return false
			}
			r.EscalationRetry = nil
			r.trace(now, r.Step, "checkpoint %s escalated on attempt %d", inst.DefinitionID, attempt)
			return true
		})
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if attempt >= EscalationAttempts {
		e.log.Error("a checkpoint's escalation failed every time; given up (the run still waits, and says so in its thread and the App Home)",
			"run", r.ID, "checkpoint", id, "attempts", attempt, "err", err)
		return e.update(ctx, r, func(r *Run) bool {
			r.EscalationRetry = nil
			r.trace(now, r.Step, "checkpoint %s: its escalation failed %d times (%v); given up", inst.DefinitionID, attempt, err)
			return true
		})
	}
	at := now.Add(escalationWait(attempt))
	e.log.Warn("a checkpoint's escalation failed; trying again later", "run", r.ID, "checkpoint", id, "attempt", attempt, "at", at, "err", err)
	if uerr := e.update(ctx, r, func(r *Run) bool {
		cur := r.Current()
		if cur == nil || cur.ID != id || cur.State != checkpoints.StateTimedOut {
			return false // decided or skipped meanwhile: nobody needs telling
		}
		r.EscalationRetry = &EscalationRetry{Checkpoint: id, Attempt: attempt, At: at, Error: err.Error()}
		r.trace(now, r.Step, "checkpoint %s: escalation %d of %d failed (%v); trying again at %s", inst.DefinitionID, attempt, EscalationAttempts, err, at.Format(time.RFC3339))
		return true
	}); uerr != nil {
		return uerr
	}
	if r.EscalationRetry == nil || r.EscalationRetry.Checkpoint != id {
		return nil
	}
	if qerr := e.cfg.Queue.WakeAt(ctx, r.Origin.Queue, at); qerr != nil {
		// The store keeps the run's deadline too: a claim pass finds it.
		e.log.Warn("schedule an escalation retry", "run", r.ID, "checkpoint", id, "err", qerr)
	}
	return nil
}
