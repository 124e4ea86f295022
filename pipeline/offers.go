package pipeline

// A checkpoint's life while its run waits for people: offered (state
// first, side effect second), re-offered when showing it failed, given up
// to its breaker, timed out, reminded and escalated. Advance calls these
// from advanceWaiting, the timeouts once the run's deadline has come (a
// worker advances a run whose deadline came as any other with work).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// offer shows a pending (or failed, or timed out) checkpoint. State first,
// side effect second: the instance is saved as offered, and marked as being
// offered, before the presenter shows it, so a click that arrives at once
// finds it open and a worker that dies before showing it is replaced.
func (e *Engine) offer(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Clock.Now()
	if auto, ok := e.cfg.AutoDeciders[r.Origin.Kind]; ok {
		if d, ok := auto.AutoDecide(r, inst); ok {
			if err := inst.Offer(now, "engine"); err != nil {
				return false, err
			}
			if d.At.IsZero() {
				d.At = now
			}
			if err := inst.Decide(d); err != nil {
				return false, fmt.Errorf("auto decision on %s: %w", inst.DefinitionID, err)
			}
			return true, e.save(ctx, r)
		}
	}
	if err := inst.Offer(now, "engine"); err != nil {
		if errors.Is(err, checkpoints.ErrRetriesExhausted) {
			return e.giveUpCheckpoint(ctx, r, inst)
		}
		return false, err
	}
	r.Status = StatusWaiting
	r.Offering = inst.ID
	if err := e.save(ctx, r); err != nil {
		return false, err
	}
	return false, e.present(ctx, r)
}

// present shows the checkpoint named by r.Offering, clears the mark, and
// sets the checkpoint's timer. Presenters look before they post (a message
// already posted for this attempt is updated, not posted again), so showing
// again after a crash does not show twice.
func (e *Engine) present(ctx context.Context, r *Run) error {
	id := r.Offering
	inst := r.Instance(id)
	cleared := func(r *Run) bool {
		if r.Offering != id {
			return false
		}
		r.Offering = ""
		return true
	}
	if inst == nil || r.Waiting != id || r.Status.Final() || !(inst.Open() || inst.State == checkpoints.StateTimedOut) {
		return e.update(ctx, r, cleared) // decided or replaced meanwhile: nothing to show
	}
	spanCtx, endSpan := e.traceCheckpoint(ctx, r, inst.DefinitionID)
	err := e.presenter(r).Offer(spanCtx, r, inst)
	endSpan(err)
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return e.offerFailed(ctx, r, id, err)
	}
	deadline := inst.DeadlineAt
	open := inst.Open() || inst.State == checkpoints.StateTimedOut
	// A person may have decided meanwhile (without the lease): update re-reads.
	if err := e.update(ctx, r, cleared); err != nil {
		return err
	}
	if open && !deadline.IsZero() {
		if err := e.cfg.Queue.WakeAt(ctx, r.Origin.Queue, deadline); err != nil {
			// The store keeps every deadline too: a claim pass finds it.
			e.log.Warn("schedule checkpoint timeout", "run", r.ID, "checkpoint", id, "err", err)
		}
	}
	return nil
}

// offerFailed records that a checkpoint could not be shown, for its retries
// and its definition's circuit breaker. The returned error makes the worker
// try again later.
func (e *Engine) offerFailed(ctx context.Context, r *Run, instID string, cause error) error {
	now := e.cfg.Clock.Now()
	recorded := false
	var trip *breakerTrip
	err := e.update(ctx, r, func(r *Run) bool {
		inst := r.Instance(instID)
		if r.Offering == instID {
			r.Offering = ""
		}
		if inst == nil || !inst.Open() {
			return true
		}
		_ = inst.Fail(now, cause.Error())
		r.recordError(now, r.Step, "checkpoint", fmt.Sprintf("could not show checkpoint %s: %v", inst.DefinitionID, cause))
		if !recorded {
			recorded = true
			trip = e.recordCheckpointFailure(ctx, r.ID, inst.DefinitionID, now)
		}
		return true
	})
	if err != nil {
		e.log.Warn("record a checkpoint that could not be shown", "run", r.ID, "err", err)
	}
	if trip != nil {
		if err := e.presenter(r).BreakerTripped(ctx, trip.def, trip.failures); err != nil {
			e.log.Warn("alert about a tripped breaker", "run", r.ID, "definition", trip.def.ID, "err", err)
		}
	}
	return fmt.Errorf("show checkpoint of run %s: %w", r.ID, cause)
}

// breakerTrip is a failure that tripped a definition's circuit breaker.
type breakerTrip struct {
	def      checkpoints.Definition
	failures int
}

// recordCheckpointFailure counts a failure against its definition's
// breaker; it returns the trip when the breaker is now open, else nil.
func (e *Engine) recordCheckpointFailure(ctx context.Context, runID, defID string, now time.Time) *breakerTrip {
	window := time.Hour
	var def *checkpoints.Definition
	if defs, err := e.cfg.Store.Definitions(ctx); err == nil {
		for i, d := range defs {
			if d.ID == defID && d.BreakerWindow > 0 {
				window, def = d.BreakerWindow, &defs[i]
			}
		}
	}
	fails, err := e.cfg.Store.RecordCheckpointFailure(ctx, defID, now, window)
	if err != nil {
		e.log.Warn("record checkpoint failure", "run", runID, "err", err)
		return nil
	}
	if def == nil || !checkpoints.BreakerTripped(*def, fails, now) {
		return nil
	}
	return &breakerTrip{def: *def, failures: len(fails)}
}

// giveUpCheckpoint handles a checkpoint that failed more often than its
// retries allow: an optional one is skipped; a required one waits, stranded,
// for a person's Retry or an admin's "continue without it" (Slack, or
// researchbot checkpoints skip), and the presenter is told.
func (e *Engine) giveUpCheckpoint(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Clock.Now()
	if !inst.Required {
		if err := inst.Skip(now, "engine", "could not be shown: "+inst.LastError); err != nil {
			return false, err
		}
		r.leaveCheckpoint()
		r.trace(now, r.Step, "checkpoint %s skipped: it could not be shown", inst.DefinitionID)
		return true, e.save(ctx, r)
	}
	r.Stranded = inst.ID
	r.Status = StatusWaiting
	r.trace(now, r.Step, "checkpoint %s could not be shown after %d attempts: waiting for a retry or an admin", inst.DefinitionID, inst.Attempt)
	if err := e.save(ctx, r); err != nil {
		return false, err
	}
	if err := e.presenter(r).Stranded(ctx, r, inst); err != nil {
		e.log.Warn("tell that a checkpoint could not be shown", "run", r.ID, "checkpoint", inst.ID, "err", err)
	}
	return false, nil
}

// timeOut applies the timeout of the run's current checkpoint, whose
// deadline has passed. An optional checkpoint is skipped and the run goes
// on; a required one is marked timed out and offered again as a reminder
// while its retries last; after that it stays timed out until someone
// answers it, reminded. Reminders back off and are bounded by the
// checkpoint's reminder policy; when they are used up the policy's
// escalation is made once and nothing more is posted. A timeout is
// never read as a rejection. A checkpoint whose definition approves on
// timeout (checkpoints.TimeoutApprove) approves itself instead, unless a
// required field is empty.
func (e *Engine) timeOut(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Clock.Now()
	if inst.OnTimeout == checkpoints.TimeoutApprove {
		// Its definition says it approves itself at its deadline (and the
		// person was told so): a decision, recorded and collapsed like any.
		err := inst.ApproveOnTimeout(now)
		if err == nil {
			r.trace(now, r.Step, "checkpoint %s approved itself: nobody decided by its deadline, as its timeout policy says", inst.DefinitionID)
			return true, e.applyDecision(ctx, r, inst)
		}
		r.trace(now, r.Step, "checkpoint %s could not approve itself at its deadline (%v); reminding instead", inst.DefinitionID, err)
	}
	if err := inst.TimeOut(now); err != nil {
		return false, err
	}
	if !inst.Required {
		if err := inst.Skip(now, "engine", "timed out"); err != nil {
			return false, err
		}
		r.leaveCheckpoint()
		r.trace(now, r.Step, "optional checkpoint %s timed out and was skipped", inst.DefinitionID)
		if err := e.save(ctx, r); err != nil {
			return false, err
		}
		if err := e.presenter(r).Decided(ctx, r, inst); err != nil {
			e.log.Warn("collapse a skipped checkpoint", "run", r.ID, "checkpoint", inst.ID, "err", err)
		}
		return true, nil
	}
	if !inst.RemindersLeft() {
		return e.stopReminders(ctx, r, inst)
	}
	r.trace(now, r.Step, "checkpoint %s timed out; reminding", inst.DefinitionID)
	if inst.CanRetry() {
		return e.offer(ctx, r, inst)
	}
	// Re-offers are used up: it stays timed out until someone answers it,
	// and is reminded while its policy allows.
	return e.remind(ctx, r, inst)
}

// stopReminders ends the reminders of a timed-out checkpoint whose policy
// allows no more: it keeps waiting, without a deadline, and the presenter
// (Presenter.RemindersStopped) says so in the checkpoint's message and tells whom
// the policy names. The state is saved first, so the escalation is made at
// most once; one that fails is tried again later (escalate).
func (e *Engine) stopReminders(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Clock.Now()
	if err := inst.StopReminders(now); err != nil {
		return false, err
	}
	pol := inst.ReminderPolicy()
	r.trace(now, r.Step, "checkpoint %s: %d reminders without a decision; reminders stopped, escalated to %s; still waiting", inst.DefinitionID, inst.Reminded, pol.Escalate)
	if err := e.save(ctx, r); err != nil {
		return false, err
	}
	return false, e.escalate(ctx, r, inst, 1)
}

// remind shows a timed-out checkpoint again as a reminder and sets its next
// deadline one backed-off interval on.
func (e *Engine) remind(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Clock.Now()
	if err := inst.Remind(now); err != nil {
		return false, err
	}
	r.trace(now, r.Step, "checkpoint %s still waits; reminder %d", inst.DefinitionID, inst.Attempt)
	r.Offering = inst.ID
	if err := e.save(ctx, r); err != nil {
		return false, err
	}
	return false, e.present(ctx, r)
}
