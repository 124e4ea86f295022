package pipeline

// Advancing a run: a worker takes its lease and carries it from step to
// step, through its checkpoints, until it waits for a person or finishes;
// what the run says a worker has to do (NeedsWorker, Deadline).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// maxWakeRounds bounds how often one Advance call takes the lease again for
// work that arrived while it held it.
const maxWakeRounds = 8

// Advance runs the run's next steps until it waits at a checkpoint, finishes,
// or ctx ends. A worker calls it; the Locker makes sure only one worker at a
// time advances a run, and ErrLeaseBusy says another one does.
//
// No wake-up is lost: a decision, cancellation or timer that arrives while
// the lease is held finds the lease busy and leaves the run to its holder,
// and the holder, after releasing the lease, reads the run once more and
// goes on if it has work (a busy caller gave up before that release, so the
// read sees what it left).
//
// An error means the step in flight was not saved: the caller may try again
// later (the run is unchanged since its last save). A *RetryError says a
// step failed and when to try it again.
func (e *Engine) Advance(ctx context.Context, runID string) error {
	for range maxWakeRounds {
		last, err := e.advanceLeased(ctx, runID)
		if err != nil {
			return err
		}
		// The run as the worker last saw it stored, when it ended done: a
		// probe tells whether anyone changed it since (then it is read).
		r, by, err := e.reloadForStep(ctx, runID, last)
		if err != nil {
			return err
		}
		if !e.hasWork(r, by) {
			return nil
		}
		e.log.Debug("work arrived while the lease was held; taking it again", "run", runID)
	}
	return nil
}

// hasWork reports whether a worker should take the run now: it needs a
// worker, it is asked to stop (cancelBy), or its checkpoint's deadline has
// passed.
func (e *Engine) hasWork(r *Run, cancelBy string) bool {
	return r.NeedsWorker() || r.dueAt(e.cfg.Clock.Now()) != nil || !r.Status.Final() && cancelBy != ""
}

// NeedsWorker reports whether a worker has something to do for the run: a
// step to run, a decision to apply, a checkpoint to show, or a finished
// outcome to show. A run waiting for a person, or interrupted, does not.
func (r *Run) NeedsWorker() bool {
	if r.Status.Final() {
		return !r.Presented
	}
	if r.Status == StatusInterrupted {
		return false
	}
	if r.Offering != "" {
		return true
	}
	inst := r.Current()
	if inst == nil {
		return r.Status == StatusRunning || r.Status == StatusQueued
	}
	if r.Stranded == inst.ID {
		return false // a person's turn: Retry, or an admin continues without it
	}
	switch inst.State {
	case checkpoints.StatePending, checkpoints.StateSubmitted, checkpoints.StateFailed,
		checkpoints.StateSkipped, checkpoints.StateCollapsed:
		return true
	}
	return false
}

// Deadline is when the checkpoint the run waits on times out, if it is open
// and has a timeout (zero otherwise, and while the run is interrupted:
// nothing happens to it until it is resumed): the store keeps it as a
// durable timer.
func (r *Run) Deadline() time.Time {
	if r.Status.Final() || r.Status == StatusInterrupted {
		return time.Time{}
	}
	if inst := r.Current(); inst != nil && (inst.Open() || inst.State == checkpoints.StateTimedOut) {
		if er := r.escalationRetryOf(inst); er != nil {
			return er.At // a failed escalation tried again
		}
		return inst.DeadlineAt
	}
	return time.Time{}
}

// dueAt returns the open checkpoint whose deadline has passed at now, or nil.
func (r *Run) dueAt(now time.Time) *checkpoints.Instance {
	if d := r.Deadline(); d.IsZero() || now.Before(d) {
		return nil
	}
	return r.Current()
}

// advanceLeased takes the run's lease and advances the run until it waits
// for a person or finishes; it releases the lease before it returns. When
// it ends with the run finished and shown, it returns the run as it read or
// saved it (nil otherwise), for Advance's look after the release.
func (e *Engine) advanceLeased(ctx context.Context, runID string) (*Run, error) {
	ctx, lease, err := e.cfg.Locker.Lock(ctx, runID)
	if err != nil {
		return nil, fmt.Errorf("lease run %s: %w", runID, err)
	}
	defer lease.Release()
	leasedAt := e.cfg.Clock.Now()
	var saved *Run // the run as this worker saved it after its last step
	for {
		r, by, err := e.stepRead(ctx, runID, saved)
		if err != nil {
			return nil, err
		}
		if saved == nil {
			e.adoptCreatedAttempt(r) // the run as created here may carry its first attempt
		}
		saved = nil
		r.Fence, r.LeasedAt = lease.Fence(), leasedAt
		if r.Status.Final() {
			if !r.Presented {
				return nil, e.finished(ctx, r)
			}
			return r, nil
		}
		if r.Held {
			// Stored before the place it is shown in was made: its
			// starter releases it (Release) or withdraws it.
			return nil, nil
		}
		if by != "" {
			return nil, e.finishCancelled(ctx, r, by)
		}
		if r.Offering != "" {
			// A worker died between saving a checkpoint as offered and
			// showing it: show it now.
			if err := e.present(ctx, r); err != nil {
				return nil, err
			}
			continue
		}
		if inst := r.Current(); inst != nil {
			more, err := e.advanceWaiting(ctx, r, inst)
			if err != nil || !more {
				return nil, err
			}
			continue
		}
		if r.Pause != nil {
			if asked, err := e.askNext(ctx, r); err != nil || asked {
				if err != nil {
					return nil, err
				}
				continue
			}
		}
		if ctx.Err() != nil {
			// Hand the run back: everything done so far is saved (with
			// the next step's attempt, when the last save counted it).
			return nil, e.handBackAttempt(ctx, r)
		}
		if err := e.runStep(ctx, r); err != nil {
			return nil, err
		}
		if r.Status.Final() && r.Presented {
			return r, nil // finished and shown: Advance looks once more after the release
		}
		saved = r
	}
}

// StepProbe is what a worker that saved a run reads before its next step
// instead of the run: enough to know whether its copy is still the stored
// run, and whether anyone asked to cancel it.
type StepProbe struct {
	Version   int64  // the stored version
	SaveNonce string // the nonce of the save that stored it
	CancelBy  string // who asked to cancel the run ("" for no one)
}

// reloadForStep is loadForStep for a worker that may hold the run as it
// saved it (saved, or nil): when the stored version and the save that wrote
// it are still saved's, the copy in hand is the stored run and is not read
// again (a run record with its page texts is the largest thing a step
// reads); a run saved by anyone else since is read afresh.
func (e *Engine) reloadForStep(ctx context.Context, runID string, saved *Run) (*Run, string, error) {
	if saved != nil && saved.SaveNonce != "" {
		probe, err := e.cfg.Store.ProbeForStep(ctx, runID)
		if err != nil {
			return nil, "", err
		}
		if probe.Version == saved.Version && probe.SaveNonce == saved.SaveNonce {
			return saved, probe.CancelBy, nil
		}
	}
	return e.loadForStep(ctx, runID)
}

// stepRead is what a worker under its lease reads before a step: nothing
// when the step before ended with the save of the copy in hand, which
// counted the attempt at this step (saved.attemptSaved: the worker goes
// straight on), and that save's reply said how the run stood — the save
// read the stored version, its own nonce and the cancel request in the
// same step as its write (Run.SaveProbe) — otherwise what reloadForStep
// reads. (A step that failed and ended the run saved another copy: its
// copy in hand is not the stored one, and has no attempt saved.) A cancel request
// made after that save is seen at the end of the next step, as one made
// during a step is (the next save's reply carries it); another writer's
// save made after it makes the next save's compare-and-set fail, and the
// run is read again. (Advance's look after the lease is released is not a
// step boundary: it always asks the store.)
func (e *Engine) stepRead(ctx context.Context, runID string, saved *Run) (*Run, string, error) {
	if saved != nil && saved.attemptSaved && saved.SaveProbe != nil &&
		saved.SaveProbe.Version == saved.Version && saved.SaveProbe.SaveNonce == saved.SaveNonce {
		return saved, saved.SaveProbe.CancelBy, nil
	}
	return e.reloadForStep(ctx, runID, saved)
}

// loadForStep returns the run and who asked to cancel it ("" for no one).
func (e *Engine) loadForStep(ctx context.Context, runID string) (*Run, string, error) {
	return e.cfg.Store.LoadForStep(ctx, runID)
}

// advanceWaiting handles a run that has a current checkpoint. It reports
// whether the run can go on (the checkpoint was decided or skipped).
func (e *Engine) advanceWaiting(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	if r.Stranded == inst.ID {
		return false, nil
	}
	switch inst.State {
	case checkpoints.StateSubmitted:
		return true, e.applyDecision(ctx, r, inst)
	case checkpoints.StatePending, checkpoints.StateFailed:
		return e.offer(ctx, r, inst)
	case checkpoints.StateSkipped:
		// Skipped by a person or an admin (or by the engine before a crash): go on.
		r.leaveCheckpoint()
		r.trace(e.cfg.Clock.Now(), r.Step, "checkpoint %s skipped", inst.DefinitionID)
		if err := e.save(ctx, r); err != nil {
			return false, err
		}
		if err := e.presenter(r).Decided(ctx, r, inst); err != nil {
			e.log.Warn("collapse a skipped checkpoint", "run", r.ID, "checkpoint", inst.ID, "err", err)
		}
		return true, nil
	case checkpoints.StateCollapsed:
		// Decided but not yet cleared (a crash between two saves): go on.
		r.leaveCheckpoint()
		return true, e.save(ctx, r)
	case checkpoints.StateOffered, checkpoints.StateActive:
		if r.dueAt(e.cfg.Clock.Now()) != nil {
			return e.timeOut(ctx, r, inst)
		}
		return false, nil
	case checkpoints.StateTimedOut:
		// Its re-offers are used up: a person's turn, reminded while its
		// reminder policy allows, then escalated once.
		if r.dueAt(e.cfg.Clock.Now()) != nil {
			if er := r.escalationRetryOf(inst); er != nil {
				return false, e.escalate(ctx, r, inst, er.Attempt+1)
			}
			if !inst.RemindersLeft() {
				return e.stopReminders(ctx, r, inst)
			}
			return e.remind(ctx, r, inst)
		}
		return false, nil
	default:
		return false, nil
	}
}

// withLease takes the run's lease, loads the run under it and calls do; a
// run leased by another worker is left to it (nil).
func (e *Engine) withLease(ctx context.Context, runID string, do func(context.Context, *Run) error) error {
	ctx, lease, err := e.cfg.Locker.Lock(ctx, runID)
	if errors.Is(err, ErrLeaseBusy) {
		return nil
	}
	if err != nil {
		return err
	}
	defer lease.Release()
	r, err := e.loadLeased(ctx, runID, lease.Fence())
	if err != nil {
		return err
	}
	return do(ctx, r)
}
