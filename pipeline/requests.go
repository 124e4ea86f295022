package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/clockwait"
)

// ErrDecisionUnknown is returned by Decide when the store stopped answering
// after the decision was sent: it may or may not have been recorded. A
// caller must say exactly that, never "nothing was changed".
var ErrDecisionUnknown = errors.New("could not confirm whether the decision was recorded")

// wakeAttempts bounds how often a wake-up is sent again when the queue fails.
const wakeAttempts = 3

// Decide records a decision on the run's current checkpoint and queues the
// run. Every outcome is classified, so what a person is told is true:
//
//   - nil: the decision is recorded, and the run will act on it: it was
//     queued, or (when the queue failed even after retries) the run is left
//     in the store's index of runs with work, where a claim pass finds it
//     within a lease or two. The enqueue is idempotent (one task per run
//     version), so retrying it cannot double anything.
//   - ErrDecisionUnknown: the store stopped answering after the write was
//     sent; the decision may or may not be recorded. (When the store answers
//     again within this call, Decide reads the run to learn the truth: a save
//     that committed but whose reply was lost is reported as recorded.)
//   - ErrNotCurrent, checkpoints.ErrAlreadyDecided, *checkpoints.ValidationError,
//     checkpoints.ErrActionNotAllowed, ErrNotFound, or another error with
//     nothing sent: nothing was changed.
func (e *Engine) Decide(ctx context.Context, instanceID string, d checkpoints.Decision) (*Run, error) {
	runID := RunIDOf(instanceID)
	if runID == "" {
		return nil, ErrNotCurrent
	}
	if d.At.IsZero() {
		d.At = e.cfg.Clock.Now()
	}
	sent := false // a save whose outcome is unknown was sent
	unknown := func(err error) error {
		return fmt.Errorf("decide on %s: %w (%w)", instanceID, ErrDecisionUnknown, err)
	}
	for range maxConflictRetries {
		r, err := e.cfg.Store.Load(ctx, runID)
		if err != nil {
			if sent {
				return nil, unknown(err)
			}
			return nil, err
		}
		inst := r.Instance(instanceID)
		if inst == nil {
			return e.lostCheckpoint(ctx, r, instanceID)
		}
		if inst.Decision != nil && sameDecision(*inst.Decision, d) {
			// This very decision is stored: an earlier save committed though
			// its reply was lost.
			e.decided(ctx, r, inst, d)
			return r, nil
		}
		// Once the run has moved on, a lost save of ours can never commit
		// (its version is gone), so these answers are final.
		if inst.Final() {
			return r, checkpoints.ErrAlreadyDecided
		}
		if r.Status.Final() || r.Waiting != instanceID {
			return r, ErrNotCurrent
		}
		if inst.State == checkpoints.StateTimedOut || inst.State == checkpoints.StateFailed {
			// A person answers a checkpoint that timed out: open it again for them.
			if err := inst.Reopen(d.At, d.By); err != nil {
				return r, err
			}
		}
		if err := checkPlanEdit(inst, d); err != nil {
			return r, err
		}
		if err := inst.Decide(d); err != nil {
			return r, err
		}
		err = e.save(ctx, r)
		switch {
		case err == nil:
			e.decided(ctx, r, inst, d)
			return r, nil
		case errors.Is(err, ErrConflict):
			continue
		case errors.Is(err, ErrUnknownOutcome):
			sent = true
			if werr := clockwait.Sleep(ctx, e.cfg.Clock, 200*time.Millisecond, "pipeline", "retry"); werr != nil {
				return nil, unknown(err)
			}
			continue
		default:
			if sent {
				return nil, unknown(err)
			}
			return nil, err
		}
	}
	if sent {
		return nil, unknown(ErrConflict)
	}
	return nil, fmt.Errorf("decide on %s: %w", instanceID, ErrConflict)
}

// sameDecision reports whether two decisions are one: same person, action
// and moment.
func sameDecision(a, b checkpoints.Decision) bool {
	return a.By == b.By && a.Action == b.Action && a.At.Equal(b.At)
}

// decided counts a recorded decision and wakes the run for it.
func (e *Engine) decided(ctx context.Context, r *Run, inst *checkpoints.Instance, d checkpoints.Decision) {
	if e.cfg.Observer != nil {
		e.cfg.Observer.CheckpointDecided(inst.DefinitionID, d.Action, d.At.Sub(inst.OfferedAt))
	}
	e.wake(ctx, r)
}

// wake hints to a worker that the run (saved) has work, trying again a few
// times when the hint fails. A run whose hint failed is not lost: it is in
// the store's index of runs with work, and a claim pass takes it.
func (e *Engine) wake(ctx context.Context, r *Run) {
	var err error
	for i := range wakeAttempts {
		if err = e.cfg.Queue.Wake(ctx, r.Origin.Queue, r.ID); err == nil {
			return
		}
		if i == wakeAttempts-1 || clockwait.Sleep(ctx, e.cfg.Clock, time.Duration(100<<i)*time.Millisecond, "pipeline", "retry") != nil {
			break
		}
	}
	e.log.Warn("could not wake a worker for the run; a claim pass will pick it up", "run", r.ID, "err", err)
}

// Opened marks the current checkpoint active (a person opened its form).
func (e *Engine) Opened(ctx context.Context, instanceID, actor string) error {
	runID := RunIDOf(instanceID)
	for range maxConflictRetries {
		r, err := e.cfg.Store.Load(ctx, runID)
		if err != nil {
			return err
		}
		inst := r.Instance(instanceID)
		if inst == nil || r.Waiting != instanceID || r.Status.Final() {
			return ErrNotCurrent
		}
		if inst.State != checkpoints.StateOffered {
			return nil
		}
		if err := inst.Activate(e.cfg.Clock.Now(), actor); err != nil {
			return err
		}
		if err := e.save(ctx, r); errors.Is(err, ErrConflict) {
			continue
		} else {
			return err
		}
	}
	return ErrConflict
}

// Cancel asks a run to stop at its next step boundary; a run that waits for a
// person or is queued stops at once.
func (e *Engine) Cancel(ctx context.Context, runID, by string) error {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return err
	}
	if r.Status.Final() {
		return ErrRunFinished
	}
	if err := e.cfg.Store.RequestCancel(ctx, runID, by); err != nil {
		return err
	}
	e.wake(ctx, r)
	return nil
}

// Resume makes a run move again after its process stopped: an interrupted
// run is queued again, and any other unfinished run is woken (a waiting run
// stays waiting; its checkpoint is shown again if it never was).
func (e *Engine) Resume(ctx context.Context, runID string) (*Run, error) {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Status.Final() {
		return r, nil
	}
	if err := e.update(ctx, r, func(r *Run) bool {
		if r.Status != StatusInterrupted || r.Held { // a held run is its starter's to release
			return false
		}
		r.Status = StatusQueued
		if r.Waiting != "" {
			r.Status = StatusWaiting // its checkpoint still waits for the person
		}
		r.trace(e.cfg.Clock.Now(), r.Step, "resumed")
		return true
	}); err != nil {
		return r, err
	}
	if err := e.cfg.Queue.Wake(ctx, r.Origin.Queue, r.ID); err != nil {
		return r, fmt.Errorf("queue run %s: %w", r.ID, err)
	}
	return r, nil
}

// Release lets a held run (Request.Held) go on, shown in threadTS of its
// origin's channel: it is queued. A run released already (by another
// process that finished starting it) is returned as it is.
func (e *Engine) Release(ctx context.Context, runID, threadTS string) (*Run, error) {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	released := false
	if err := e.update(ctx, r, func(r *Run) bool {
		if !r.Held {
			return false
		}
		r.Held, r.Status, r.Origin.ThreadTS = false, StatusQueued, threadTS
		r.trace(e.cfg.Clock.Now(), r.Step, "released: its thread is shown")
		released = true
		return true
	}); err != nil {
		return r, err
	}
	if released {
		e.wake(ctx, r)
	}
	return r, nil
}

// Withdraw ends a held run (Request.Held) that cannot be shown (its
// starter could not post where it runs): it is cancelled, with nothing to
// show. A run no longer held is left as it is.
func (e *Engine) Withdraw(ctx context.Context, runID, reason string) error {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return err
	}
	return e.update(ctx, r, func(r *Run) bool {
		if !r.Held {
			return false
		}
		now := e.cfg.Clock.Now()
		r.Held, r.Status, r.Step, r.FinishedAt, r.Presented = false, StatusCancelled, StepDone, now, true
		r.trace(now, r.Step, "withdrawn before it started: %s", reason)
		return true
	})
}

// Interrupt marks a run whose process is going away (Ctrl-C in a terminal)
// as interrupted, so it is listed as such and not rescued, until Resume. A
// run stopped at a checkpoint prompt is interrupted too (its checkpoint is
// kept, and asked again on Resume); a run that has finished, or is being
// advanced by another worker, is left as it is.
func (e *Engine) Interrupt(ctx context.Context, runID string) error {
	return e.withLease(ctx, runID, func(ctx context.Context, r *Run) error {
		return e.update(ctx, r, func(r *Run) bool {
			if r.Status != StatusRunning && r.Status != StatusQueued && r.Status != StatusWaiting {
				return false
			}
			r.Status = StatusInterrupted
			r.trace(e.cfg.Clock.Now(), r.Step, "interrupted: its process stopped")
			return true
		})
	})
}
