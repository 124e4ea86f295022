package pipeline

import (
	"context"
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

// MaxStepAttempts bounds the attempts at one step of a run, counted in the
// run record across workers, queue tasks and crashes. Each attempt makes
// the Model's own retries (LLM_MAX_RETRIES), so with the model down a run
// makes at most MaxStepAttempts × (1 + retries) calls before it ends,
// failed or partial, with the cause.
const MaxStepAttempts = 3

// StepRetryDelay is how long a run waits before the next attempt at a step
// that failed n times: 2 s, then 4 s. Short on purpose: the Model already
// backed off between its own retries, and a person may be watching.
func StepRetryDelay(n int) time.Duration { return time.Duration(1<<min(max(n, 1), 5)) * time.Second }

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
		r, by, err := e.reloadForStep(ctx, runID, saved)
		if err != nil {
			return nil, err
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

// finishesSilently reports whether the run's presenter shows nothing when
// the run finishes (SilentFinisher).
func (e *Engine) finishesSilently(r *Run) bool {
	sf, ok := e.presenter(r).(SilentFinisher)
	return ok && sf.FinishesSilently()
}

// handBackAttempt returns the cause of ctx's end for a worker that stops at
// a step boundary. When its last save counted the attempt at the step it
// will not run now (countNextAttempt) and it is shutting down, the attempt
// is handed back as a step stopped by a shutdown is (stepFailed): it was
// never made. A lost lease hands nothing back (the new holder's run is not
// this worker's to change).
func (e *Engine) handBackAttempt(ctx context.Context, r *Run) error {
	cause := context.Cause(ctx)
	if !r.attemptSaved || errors.Is(cause, context.DeadlineExceeded) {
		return cause
	}
	return e.stepFailed(ctx, r.ID, r.Fence, 0, r.Spend, r.Attempt.ModelWait, cause)
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

// loadForStep returns the run and who asked to cancel it ("" for no one).
func (e *Engine) loadForStep(ctx context.Context, runID string) (*Run, string, error) {
	return e.cfg.Store.LoadForStep(ctx, runID)
}

// loadLeased loads the run for the holder of the lease with this fence.
func (e *Engine) loadLeased(ctx context.Context, runID string, fence int64) (*Run, error) {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	r.Fence = fence
	return r, nil
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

// runStep executes the run's next step and saves the result. The attempt is
// counted (and saved) before the step runs: by the save that ended the
// step before, when this worker goes straight on (countNextAttempt), or
// else by a save of its own. A step that fails is tried again later (a
// *RetryError) until its attempts are used up, then the run ends with the
// cause.
func (e *Engine) runStep(ctx context.Context, r *Run) (err error) {
	step := r.Step
	st := e.steps.lookup(step)
	counted := r.attemptSaved && r.Attempt.Step == step && r.Attempt.N > 0
	r.attemptSaved = false
	if !counted {
		if r.Attempt.Step != step {
			r.Attempt = StepAttempt{Step: step}
		}
		if r.Attempt.N >= st.Retry {
			// The last attempt never reported back (its worker died): stop here.
			cause := r.Attempt.LastError
			if cause == "" {
				cause = "its worker stopped before it finished"
			}
			return e.endAfterAttempts(ctx, r, cause)
		}
		r.Attempt.N++
		r.Status = StatusRunning
	}
	e.traceRun(ctx, r)
	if !counted {
		if err := e.save(ctx, r); err != nil {
			return err
		}
	}
	ctx, endSpan := e.traceStep(ctx, r)
	defer func() { endSpan(err) }()
	e.log.Debug("step start", "run", r.ID, "step", step, "attempt", r.Attempt.N)
	start := e.cfg.Clock.Now()
	err = e.execStep(ctx, r, st)
	elapsed := e.cfg.Clock.Now().Sub(start)
	e.log.Debug("step end", "run", r.ID, "step", step, "attempt", r.Attempt.N, "duration", elapsed, "ok", err == nil)
	if e.cfg.Observer != nil {
		e.cfg.Observer.StepDone(step, elapsed, err)
	}
	if errors.Is(err, ErrModelUnusable) {
		// Retrying will not help: end now, with what the run has.
		e.endEarly(r, fmt.Sprintf("the model could not do the %s step: %v", step, err))
		err = nil
	}
	if err != nil {
		return e.stepFailed(ctx, r.ID, r.Fence, elapsed, r.Spend, r.Attempt.ModelWait, err)
	}
	r.Attempt = StepAttempt{}
	r.Active += elapsed
	e.countNextAttempt(r)
	if r.Status.Final() && e.finishesSilently(r) {
		// Nothing is shown: the end and its showing are one save, and
		// finished (below) finds the run shown.
		r.Presented = true
	}
	if err := e.save(ctx, r); err != nil {
		return err
	}
	if r.Status.Final() {
		return e.finished(ctx, r)
	}
	e.presenter(r).Progress(ctx, r)
	return nil
}

// countNextAttempt counts, in the save that ends a step, the first attempt
// at the next one when the worker will go straight on to it (no checkpoint
// to show or wait on, no question to ask, not finished): one save per step
// instead of two, and the attempt is still saved before the step starts. A
// worker that finds the run changed at the step boundary (another writer, a
// cancel request, a shutdown) does not run that step on this count: it
// reads the run again, or hands the attempt back (handBackAttempt).
func (e *Engine) countNextAttempt(r *Run) {
	if r.Status.Final() || r.Status == StatusWaiting || r.Status == StatusInterrupted ||
		r.Offering != "" || r.Current() != nil || r.Pause != nil {
		return
	}
	if e.steps.lookup(r.Step).Retry <= 0 {
		return
	}
	r.Attempt = StepAttempt{Step: r.Step, N: 1}
	r.Status = StatusRunning
	r.attemptSaved = true
}

// stepFailed records a failed attempt. The run in memory holds the failed
// step's partial work, so the record is made on a fresh copy, keeping only
// what the attempt spent (spend only grows). A step that was stopped (lease
// lost, shutdown) is not a failure of the step: its attempt is handed back
// when the worker shuts down.
func (e *Engine) stepFailed(ctx context.Context, runID string, fence int64, elapsed time.Duration, spend Spend, modelWait time.Duration, cause error) error {
	if errors.Is(cause, ErrLeaseLost) || errors.Is(context.Cause(ctx), ErrLeaseLost) {
		return fmt.Errorf("run %s: %w", runID, ErrLeaseLost)
	}
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		// Shutting down: the step is handed back, and that is not an attempt.
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := e.updateLeased(bg, runID, fence, func(r *Run) bool {
			if r.Attempt.N == 0 {
				return false
			}
			r.Attempt.N--
			return true
		}); err != nil {
			e.log.Info("could not hand back the attempt of a stopped step", "run", runID, "err", err)
		}
		return cause
	}
	// The step's context may have ended (its deadline); the lease is still
	// held, so record the failure on a context of its own.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	r, err := e.loadLeased(ctx, runID, fence)
	if err != nil {
		return err
	}
	now := e.cfg.Clock.Now()
	msg := Describe(cause)
	r.Attempt.LastError = msg
	r.Active += elapsed
	r.Spend = spend
	r.Attempt.ModelWait = max(r.Attempt.ModelWait, modelWait)
	limit := e.attempts(r.Step)
	r.recordError(now, r.Step, "step", fmt.Sprintf("attempt %d of %d failed: %s", r.Attempt.N, limit, msg))
	e.log.Info("step failed", "run", r.ID, "step", r.Step, "attempt", r.Attempt.N, "err", cause)
	if r.Attempt.N >= limit {
		return e.endAfterAttempts(ctx, r, msg)
	}
	if err := e.save(ctx, r); err != nil {
		return err
	}
	after := StepRetryDelay(r.Attempt.N)
	e.notice(ctx, r, "the %s step failed (%s); trying again in %s (attempt %d of %d)", r.Step, msg, roundWait(after), r.Attempt.N+1, limit)
	return &RetryError{Step: r.Step, Attempt: r.Attempt.N, After: after, Err: cause}
}

// endAfterAttempts ends a run whose step failed MaxStepAttempts times.
func (e *Engine) endAfterAttempts(ctx context.Context, r *Run, cause string) error {
	e.endEarly(r, fmt.Sprintf("the %s step failed %d times: %s", r.Attempt.Step, r.Attempt.N, cause))
	if err := e.save(ctx, r); err != nil {
		return err
	}
	return e.finished(ctx, r)
}

// Describe says what went wrong in one line for people: the error's own
// text, which the adapters word for them ("the model at … could not be
// reached"), without Go's wrapping noise.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var dt interface{ Describe() string }
	if errors.As(err, &dt) {
		return dt.Describe()
	}
	return err.Error()
}

func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// notice shows a passing note about the run through its presenter.
func (e *Engine) notice(ctx context.Context, r *Run, format string, args ...any) {
	e.presenter(r).Notice(ctx, r, fmt.Sprintf(format, args...))
}

// modelRetryNotice is the Prompt.OnRetry of the run's LLM calls: a retry
// shows as progress ("the model is not answering (retry 2 of 4 in 8s)").
func (e *Engine) modelRetryNotice(ctx context.Context, r *Run) func(ModelRetry) {
	return func(m ModelRetry) {
		e.notice(ctx, r, "the model is not answering (retry %d of %d in %s)", m.Retry, m.Of, roundWait(m.Wait))
	}
}

// save stores r with a version check (and the fence, when r was loaded under
// a lease) and stamps UpdatedAt. A save that lost only to steering notes
// takes them and saves again (rebaseNotes).
func (e *Engine) save(ctx context.Context, r *Run) error {
	if r.Status.Final() || r.Status == StatusInterrupted {
		r.PersonToken = "" // the person's permission lasts as long as their run
	}
	for range MaxSteeringNotes + 1 {
		r.UpdatedAt = e.cfg.Clock.Now()
		err := e.cfg.Store.Save(ctx, r)
		if !errors.Is(err, ErrConflict) || !e.rebaseNotes(ctx, r) {
			return err
		}
	}
	return fmt.Errorf("save run %s: %w", r.ID, ErrConflict)
}

// update applies change to r and saves it; when someone else saved the run
// in between, it re-reads the run (keeping r's fence) and applies change
// again. change reports false when there is nothing to do. r ends up as
// stored.
func (e *Engine) update(ctx context.Context, r *Run, change func(*Run) bool) error {
	for range maxConflictRetries {
		if !change(r) {
			return nil
		}
		err := e.save(ctx, r)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		fresh, err := e.loadLeased(ctx, r.ID, r.Fence)
		if err != nil {
			return err
		}
		*r = *fresh
	}
	return fmt.Errorf("update run %s: %w", r.ID, ErrConflict)
}

// updateLeased is update on a fresh copy of the run.
func (e *Engine) updateLeased(ctx context.Context, runID string, fence int64, change func(*Run) bool) error {
	r, err := e.loadLeased(ctx, runID, fence)
	if err != nil {
		return err
	}
	return e.update(ctx, r, change)
}

// finished shows a finished (and saved) run's outcome, then records that it
// was shown. If showing fails, the error makes the worker try again later:
// Advance presents a finished run until it is marked Presented, so presenters
// must be idempotent.
func (e *Engine) finished(ctx context.Context, r *Run) error {
	if err := e.presenter(r).Finished(ctx, r); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r.PresentAttempts++
		r.recordError(e.cfg.Clock.Now(), r.Step, "present", "the outcome could not be shown: "+err.Error())
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
	return e.update(ctx, r, func(r *Run) bool {
		if r.Presented {
			return false
		}
		r.Presented = true
		return true
	})
}

func (e *Engine) finishCancelled(ctx context.Context, r *Run, by string) error {
	now := e.cfg.Clock.Now()
	r.Status = StatusCancelled
	r.Step = StepDone
	r.FinishedAt = now
	r.CancelledBy = by
	r.Offering = ""
	if inst := r.Current(); inst != nil && !inst.Final() {
		_ = inst.Fail(now, "run cancelled")
	}
	r.trace(now, r.Step, "cancelled by %s", by)
	if err := e.save(ctx, r); err != nil {
		return err
	}
	return e.finished(ctx, r)
}

// endEarly ends a run that cannot go on: with content, through the fallback
// (a partial report stating why); without, as failed with the reason.
func (e *Engine) endEarly(r *Run, msg string) {
	now := e.cfg.Clock.Now()
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
	r.Offering = ""
}

// Fail ends a run whose worker kept failing outside of its steps (the queue
// gave up on it): with content it ends through the fallback (a partial
// report stating the failure); without, it is marked failed with the error.
func (e *Engine) Fail(ctx context.Context, runID string, cause error) error {
	return e.withLease(ctx, runID, func(ctx context.Context, r *Run) error {
		if r.Status.Final() {
			if !r.Presented {
				return e.finished(ctx, r) // one last try at showing the outcome
			}
			return nil
		}
		e.endEarly(r, fmt.Sprintf("step %s kept failing: %s", r.Step, Describe(cause)))
		if err := e.save(ctx, r); err != nil {
			return err
		}
		return e.finished(ctx, r)
	})
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
