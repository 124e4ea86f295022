package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// maxPresentAttempts bounds how often a finished run's outcome is offered to
// a presenter that keeps failing (e.g. the bot was removed from the channel).
const maxPresentAttempts = 8

// maxConflictRetries bounds how often a writer that lost a compare-and-set
// re-reads the run and tries again.
const maxConflictRetries = 8

// Advance runs the run's next steps until it waits at a checkpoint, finishes,
// or ctx ends. A worker calls it; the Locker makes sure only one worker at a
// time advances a run. An error means the step in flight was not saved: the
// caller may try again later (the run is unchanged since its last save).
func (e *Engine) Advance(ctx context.Context, runID string) error {
	release, err := e.cfg.Locker.Lock(ctx, runID)
	if err != nil {
		return fmt.Errorf("lease run %s: %w", runID, err)
	}
	defer release()
	for {
		r, err := e.cfg.Store.Load(ctx, runID)
		if err != nil {
			return err
		}
		if r.Status.Final() {
			if !r.Presented {
				return e.finished(ctx, r)
			}
			return nil
		}
		if by, err := e.cfg.Store.CancelRequested(ctx, runID); err != nil {
			return err
		} else if by != "" {
			return e.finishCancelled(ctx, r, by)
		}
		if inst := r.Current(); inst != nil {
			more, err := e.advanceWaiting(ctx, r, inst)
			if err != nil || !more {
				return err
			}
			continue
		}
		if err := ctx.Err(); err != nil {
			return err // hand the run back: everything done so far is saved
		}
		if err := e.runStep(ctx, r); err != nil {
			return err
		}
	}
}

// advanceWaiting handles a run that has a current checkpoint. It reports
// whether the run can go on (the checkpoint was decided or skipped).
func (e *Engine) advanceWaiting(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	switch inst.State {
	case checkpoints.StateSubmitted:
		return true, e.applyDecision(ctx, r, inst)
	case checkpoints.StatePending, checkpoints.StateFailed:
		return e.offer(ctx, r, inst)
	case checkpoints.StateSkipped, checkpoints.StateCollapsed:
		// Decided but not yet cleared (a crash between two saves): go on.
		r.Waiting = ""
		r.Status = StatusRunning
		return true, e.save(ctx, r)
	default: // offered, active, timed_out: a person's turn
		return false, nil
	}
}

// runStep executes the run's next step and saves the result.
func (e *Engine) runStep(ctx context.Context, r *Run) error {
	step := r.Step
	start := e.cfg.Now()
	r.Status = StatusRunning
	err := e.execStep(ctx, r)
	elapsed := e.cfg.Now().Sub(start)
	if e.cfg.Observer != nil {
		e.cfg.Observer.StepDone(step, elapsed, err)
	}
	if errors.Is(err, ErrModelUnusable) {
		// Retrying will not help: end now, with what the run has.
		e.endEarly(r, fmt.Sprintf("the model could not do the %s step: %v", step, err))
		err = nil
	}
	if err != nil {
		e.log.Warn("step failed", "run", r.ID, "step", step, "err", err)
		return fmt.Errorf("run %s step %s: %w", r.ID, step, err)
	}
	r.Active += elapsed
	if err := e.save(ctx, r); err != nil {
		return err
	}
	if r.Status.Final() {
		return e.finished(ctx, r)
	}
	e.presenter(r).Progress(ctx, r)
	return nil
}

func (e *Engine) execStep(ctx context.Context, r *Run) error {
	switch r.Step {
	case StepPlan:
		return e.stepPlan(ctx, r)
	case StepSearch:
		return e.stepSearch(ctx, r)
	case StepRank:
		return e.stepRank(ctx, r)
	case StepFetch:
		return e.stepFetch(ctx, r)
	case StepAnalyze:
		return e.stepAnalyze(ctx, r)
	case StepWrite:
		return e.stepWrite(ctx, r)
	case StepReview:
		return e.stepReview(ctx, r)
	case StepOutput:
		return e.stepOutput(ctx, r)
	case StepFallback:
		return e.stepFallback(ctx, r)
	default:
		return fmt.Errorf("unknown step %q", r.Step)
	}
}

// save stores r with a version check and stamps UpdatedAt.
func (e *Engine) save(ctx context.Context, r *Run) error {
	r.UpdatedAt = e.cfg.Now()
	return e.cfg.Store.Save(ctx, r)
}

// finished shows a finished (and saved) run's outcome, then records that it
// was shown. If showing fails, the error makes the worker try again later:
// Advance presents a finished run until it is marked Presented, so presenters
// must be idempotent.
func (e *Engine) finished(ctx context.Context, r *Run) error {
	if err := e.presenter(r).Finished(ctx, r); err != nil {
		r.PresentAttempts++
		r.recordError(e.cfg.Now(), r.Step, "present", "the outcome could not be shown: "+err.Error())
		if r.PresentAttempts < maxPresentAttempts {
			e.log.Warn("presenting the finished run failed; it will be tried again", "run", r.ID, "attempt", r.PresentAttempts, "err", err)
			if serr := e.save(ctx, r); serr != nil && !errors.Is(serr, ErrConflict) {
				e.log.Warn("record a failed presentation", "run", r.ID, "err", serr)
			}
			return fmt.Errorf("present finished run %s: %w", r.ID, err)
		}
		// Give up: the run and its report stay in the store (researchbot runs,
		// /research status), and the error says why they were not shown.
		e.log.Error("giving up showing the finished run", "run", r.ID, "attempts", r.PresentAttempts, "err", err)
	}
	if e.cfg.Observer != nil {
		e.cfg.Observer.RunFinished(r.Status)
	}
	for range maxConflictRetries {
		r.Presented = true
		err := e.save(ctx, r)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		fresh, err := e.cfg.Store.Load(ctx, r.ID)
		if err != nil {
			return err
		}
		*r = *fresh
	}
	return nil
}

// pause creates a checkpoint instance for the first definition that applies
// at pos, makes it the run's current checkpoint and reports true; with no
// applicable definition it reports false and the run goes on. r.Step must
// already name the step that follows an approval.
func (e *Engine) pause(ctx context.Context, r *Run, pos checkpoints.Position, payload any, fields func([]checkpoints.Field) []checkpoints.Field, values map[string]any) (bool, error) {
	if r.Mode == checkpoints.ModeAuto {
		return false, nil
	}
	defs, err := e.cfg.Store.Definitions(ctx)
	if err != nil {
		return false, fmt.Errorf("load checkpoint definitions: %w", err)
	}
	now := e.cfg.Now()
	tripped := func(id string) bool {
		for _, d := range defs {
			if d.ID != id {
				continue
			}
			fails, err := e.cfg.Store.CheckpointFailures(ctx, id, now, d.BreakerWindow)
			if err != nil {
				return false
			}
			return checkpoints.BreakerTripped(d, fails, now)
		}
		return false
	}
	applicable := checkpoints.Resolve(defs, pos, r.Mode, tripped)
	if len(applicable) == 0 {
		return false, nil
	}
	def := applicable[0]
	raw, err := json.Marshal(payload)
	if err != nil {
		return false, fmt.Errorf("encode checkpoint payload: %w", err)
	}
	fs := def.Fields
	if fields != nil {
		fs = fields(cloneFields(def.Fields))
	}
	inst := checkpoints.NewInstance(def, newInstanceID(r.ID), r.ID, raw, fs, values, now)
	r.Checkpoints = append(r.Checkpoints, inst)
	r.Waiting = inst.ID
	r.Status = StatusWaiting
	r.trace(now, r.Step, "checkpoint %s: waiting for a person", def.ID)
	return true, nil
}

func cloneFields(fs []checkpoints.Field) []checkpoints.Field {
	out := make([]checkpoints.Field, len(fs))
	copy(out, fs)
	return out
}

// offer shows a pending (or failed) checkpoint. State first, side effect
// second: the instance is saved as offered before the presenter shows it, so
// a click that arrives at once finds it open.
func (e *Engine) offer(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Now()
	p := e.presenter(r)
	if auto, ok := p.(AutoDecider); ok {
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
	if err := e.save(ctx, r); err != nil {
		return false, err
	}
	if err := p.Offer(ctx, r, inst); err != nil {
		return false, e.offerFailed(ctx, r, inst.ID, err)
	}
	if !inst.DeadlineAt.IsZero() {
		if err := e.cfg.Queue.EnqueueTimeout(ctx, r.Origin.Queue, r.ID, inst.ID, inst.DeadlineAt); err != nil {
			e.log.Warn("schedule checkpoint timeout", "run", r.ID, "checkpoint", inst.ID, "err", err)
		}
	}
	return false, nil
}

// offerFailed records that a checkpoint could not be shown, for its retries
// and its definition's circuit breaker. The returned error makes the worker
// try again later.
func (e *Engine) offerFailed(ctx context.Context, r *Run, instID string, cause error) error {
	now := e.cfg.Now()
	for range maxConflictRetries {
		inst := r.Instance(instID)
		if inst == nil || !inst.Open() {
			break
		}
		_ = inst.Fail(now, cause.Error())
		r.recordError(now, r.Step, "checkpoint", fmt.Sprintf("could not show checkpoint %s: %v", inst.DefinitionID, cause))
		window := time.Hour
		if defs, err := e.cfg.Store.Definitions(ctx); err == nil {
			for _, d := range defs {
				if d.ID == inst.DefinitionID && d.BreakerWindow > 0 {
					window = d.BreakerWindow
				}
			}
		}
		if _, err := e.cfg.Store.RecordCheckpointFailure(ctx, inst.DefinitionID, now, window); err != nil {
			e.log.Warn("record checkpoint failure", "run", r.ID, "err", err)
		}
		err := e.save(ctx, r)
		if errors.Is(err, ErrConflict) {
			if r, err = e.cfg.Store.Load(ctx, r.ID); err != nil {
				return err
			}
			continue
		}
		break
	}
	return fmt.Errorf("show checkpoint of run %s: %w", r.ID, cause)
}

// giveUpCheckpoint handles a checkpoint that failed more often than its
// retries allow: an optional one is skipped, a required one fails the run.
func (e *Engine) giveUpCheckpoint(ctx context.Context, r *Run, inst *checkpoints.Instance) (bool, error) {
	now := e.cfg.Now()
	if !inst.Required {
		if err := inst.Skip(now, "engine", "could not be shown: "+inst.LastError); err != nil {
			return false, err
		}
		r.Waiting = ""
		r.Status = StatusRunning
		r.trace(now, r.Step, "checkpoint %s skipped: it could not be shown", inst.DefinitionID)
		return true, e.save(ctx, r)
	}
	r.Status = StatusFailed
	r.Step = StepDone
	r.FinishedAt = now
	r.Failure = fmt.Sprintf("the %s checkpoint could not be shown after %d attempts: %s", inst.Label, inst.Attempt, inst.LastError)
	if err := e.save(ctx, r); err != nil {
		return false, err
	}
	return false, e.finished(ctx, r)
}

// Decide records a decision on the run's current checkpoint and queues the
// run. It returns ErrNotCurrent, checkpoints.ErrAlreadyDecided,
// *checkpoints.ValidationError (nothing changed) or ErrNotFound.
func (e *Engine) Decide(ctx context.Context, instanceID string, d checkpoints.Decision) (*Run, error) {
	runID := RunIDOf(instanceID)
	if runID == "" {
		return nil, ErrNotCurrent
	}
	if d.At.IsZero() {
		d.At = e.cfg.Now()
	}
	for range maxConflictRetries {
		r, err := e.cfg.Store.Load(ctx, runID)
		if err != nil {
			return nil, err
		}
		inst := r.Instance(instanceID)
		if inst == nil {
			return r, ErrNotCurrent
		}
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
		if err := inst.Decide(d); err != nil {
			return r, err
		}
		if err := e.save(ctx, r); errors.Is(err, ErrConflict) {
			continue
		} else if err != nil {
			return nil, err
		}
		if e.cfg.Observer != nil {
			e.cfg.Observer.CheckpointDecided(inst.DefinitionID, d.Action, d.At.Sub(inst.OfferedAt))
		}
		if err := e.cfg.Queue.Enqueue(ctx, r.Origin.Queue, r.ID); err != nil {
			return r, fmt.Errorf("decision saved, but queueing run %s failed (it resumes on the next resume): %w", r.ID, err)
		}
		return r, nil
	}
	return nil, fmt.Errorf("decide on %s: %w", instanceID, ErrConflict)
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
		if err := inst.Activate(e.cfg.Now(), actor); err != nil {
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

// CheckTimeout applies a checkpoint's timeout if it is still current and due.
// An optional checkpoint is skipped and the run goes on; a required one is
// marked timed out and offered again as a reminder while retries last. A
// timeout is never read as a rejection.
func (e *Engine) CheckTimeout(ctx context.Context, runID, instanceID string) error {
	release, err := e.cfg.Locker.Lock(ctx, runID)
	if err != nil {
		return err
	}
	defer release()
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return err
	}
	inst := r.Current()
	if inst == nil || inst.ID != instanceID || !inst.Open() || r.Status.Final() {
		return nil
	}
	now := e.cfg.Now()
	if inst.DeadlineAt.IsZero() || now.Before(inst.DeadlineAt) {
		return nil
	}
	if err := inst.TimeOut(now); err != nil {
		return err
	}
	if !inst.Required {
		if err := inst.Skip(now, "engine", "timed out"); err != nil {
			return err
		}
		r.Waiting = ""
		r.Status = StatusRunning
		r.trace(now, r.Step, "optional checkpoint %s timed out and was skipped", inst.DefinitionID)
		if err := e.save(ctx, r); err != nil {
			return err
		}
		_ = e.presenter(r).Decided(ctx, r, inst)
		return e.cfg.Queue.Enqueue(ctx, r.Origin.Queue, r.ID)
	}
	r.trace(now, r.Step, "checkpoint %s timed out; reminding", inst.DefinitionID)
	if inst.CanRetry() {
		_, err := e.offer(ctx, r, inst)
		return err
	}
	// Reminders are used up: it stays timed out until someone answers it.
	if err := e.save(ctx, r); err != nil {
		return err
	}
	return e.presenter(r).Offer(ctx, r, inst)
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
	return e.cfg.Queue.Enqueue(ctx, r.Origin.Queue, runID)
}

func (e *Engine) finishCancelled(ctx context.Context, r *Run, by string) error {
	now := e.cfg.Now()
	r.Status = StatusCancelled
	r.Step = StepDone
	r.FinishedAt = now
	r.CancelledBy = by
	if inst := r.Current(); inst != nil && !inst.Final() {
		_ = inst.Fail(now, "run cancelled")
	}
	r.trace(now, r.Step, "cancelled by %s", by)
	if err := e.save(ctx, r); err != nil {
		return err
	}
	return e.finished(ctx, r)
}

// Resume makes a run move again after its process stopped: a running or
// queued run is queued again, and a waiting run's checkpoint is shown again.
func (e *Engine) Resume(ctx context.Context, runID string) (*Run, error) {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Status.Final() {
		return r, nil
	}
	if inst := r.Current(); inst != nil && (inst.Open() || inst.State == checkpoints.StateTimedOut) {
		if err := e.presenter(r).Offer(ctx, r, inst); err != nil {
			return r, fmt.Errorf("show checkpoint again: %w", err)
		}
		return r, nil
	}
	return r, e.cfg.Queue.Enqueue(ctx, r.Origin.Queue, runID)
}

// endEarly ends a run that cannot go on: with content, through the fallback
// (a partial report stating why); without, as failed with the reason.
func (e *Engine) endEarly(r *Run, msg string) {
	now := e.cfg.Now()
	r.recordError(now, r.Step, "internal", msg)
	if len(r.Drafts) > 0 || r.Analysis != nil || len(r.Pages) > 0 {
		r.FallbackReason = msg
		r.Report = BuildFallback(r, msg, now)
		r.Status = StatusPartial
	} else {
		r.Status = StatusFailed
		r.Failure = msg
	}
	r.Step = StepDone
	r.FinishedAt = now
	r.Waiting = ""
}

// Fail ends a run whose worker kept failing: with content it ends through the
// fallback (a partial report stating the failure); without, it is marked
// failed with the error. Workers call it when their retries are used up.
func (e *Engine) Fail(ctx context.Context, runID string, cause error) error {
	release, err := e.cfg.Locker.Lock(ctx, runID)
	if err != nil {
		return err
	}
	defer release()
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return err
	}
	if r.Status.Final() {
		if !r.Presented {
			return e.finished(ctx, r) // one last try at showing the outcome
		}
		return nil
	}
	e.endEarly(r, fmt.Sprintf("step %s kept failing: %v", r.Step, cause))
	if err := e.save(ctx, r); err != nil {
		return err
	}
	return e.finished(ctx, r)
}
