package pipeline

// Attempts at a step: runStep counts and runs one, a failure is recorded
// and tried again after StepRetryDelay until MaxStepAttempts are used up,
// and the notes people see while it retries.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

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

// HeldBackRetryDelay is how long a run waits before the next attempt at a
// step that our own shared rate limit held back entirely, n times: 10 s,
// then 20 s (seed 001's backoff for a rate limit). Longer than
// StepRetryDelay on purpose: every run shares the budget, and it refills
// with time, not with trying again sooner.
func HeldBackRetryDelay(n int) time.Duration {
	return time.Duration(1<<min(max(n, 1)-1, 5)) * 10 * time.Second
}

// MaxHeldBackRounds bounds the rounds in which our own shared rate limit
// may hold back all a step had to do without using up one of its
// attempts: 10 s, 20 s, … 320 s of waiting, about ten and a half minutes, in
// which many runs at once share the budget as it refills. A step held back
// once more counts the attempt as failed, so a budget that stays spent still
// ends the run, with the cause.
const MaxHeldBackRounds = 6

// heldBackError is a step's failure when our own shared rate limit held
// back all it had to do (pipeline.SearchOutcome.Paced for every search):
// not a failure of the step, tried again after HeldBackRetryDelay
// (Engine.heldBack).
type heldBackError struct{ err error }

func (h heldBackError) Error() string { return h.err.Error() }
func (h heldBackError) Unwrap() error { return h.err }

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
			// The last attempt never reported back (its worker died): stop
			// here, and say so; an earlier attempt's own failure is named
			// beside it, not in its place.
			cause := "its worker stopped before it finished"
			if r.Attempt.LastError != "" {
				cause += " (an earlier attempt failed: " + r.Attempt.LastError + ")"
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
	elapsed, err := e.timeAttempt(r, func() error { return e.execStep(ctx, r, st) })
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
	e.runLocalSteps(ctx, r)
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
	if !r.goesStraightOn() {
		return
	}
	if e.steps.lookup(r.Step).Retry <= 0 {
		return
	}
	r.Attempt = StepAttempt{Step: r.Step, N: 1}
	r.Status = StatusRunning
	r.attemptSaved = true
}

// goesStraightOn reports whether a worker that just saved r goes on to its
// next step without stopping: not finished, not waiting for or offering a
// checkpoint, not paused to ask a question, not interrupted.
func (r *Run) goesStraightOn() bool {
	return !r.Status.Final() && r.Status != StatusWaiting && r.Status != StatusInterrupted &&
		r.Offering == "" && r.Current() == nil && r.Pause == nil
}

// runLocalSteps runs the local steps (step.Local: the report built from the
// run in hand, no I/O, cannot fail) that a run goes straight on to after a
// step that ended normally, before that step's save, so one save records
// both: a research run's review and its report are one save, not two (three
// Redis commands, one round trip). Each is still traced, logged and
// observed as a step with its one attempt. Its attempt is not saved before
// it runs, as a step's is: it does no I/O, so whatever stops the worker
// during it stops it before the save of the step before, whose attempt
// was counted.
func (e *Engine) runLocalSteps(ctx context.Context, r *Run) {
	for r.goesStraightOn() {
		st := e.steps.lookup(r.Step)
		if st.Local == nil {
			return
		}
		r.Attempt = StepAttempt{Step: st.Name, N: 1}
		_, endSpan := e.traceStep(ctx, r)
		elapsed, _ := e.timeAttempt(r, func() error { st.Local(r); return nil }, "saved_with_step_before", true)
		endSpan(nil)
		r.Attempt = StepAttempt{}
		r.Active += elapsed
	}
}

// timeAttempt runs do, the attempt r.Attempt at step r.Step, and returns
// how long it took and its error: logged at its start (with attrs) and
// end, and observed (Config.Observer).
func (e *Engine) timeAttempt(r *Run, do func() error, attrs ...any) (time.Duration, error) {
	step, n := r.Step, r.Attempt.N
	e.log.Debug("step start", append([]any{"run", r.ID, "step", step, "attempt", n}, attrs...)...)
	start := e.cfg.Clock.Now()
	err := do()
	elapsed := e.cfg.Clock.Now().Sub(start)
	e.log.Debug("step end", "run", r.ID, "step", step, "attempt", n, "duration", elapsed, "ok", err == nil)
	if e.cfg.Observer != nil {
		e.cfg.Observer.StepDone(step, elapsed, err)
	}
	return elapsed, err
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
	if errors.As(cause, new(heldBackError)) && r.Attempt.HeldBack < MaxHeldBackRounds {
		return e.heldBack(ctx, r, msg, cause)
	}
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
	if errors.As(cause, new(heldBackError)) {
		after = HeldBackRetryDelay(r.Attempt.N)
	}
	e.notice(ctx, r, "the %s step failed (%s); trying again in %s (attempt %d of %d)", r.Step, msg, roundWait(after), r.Attempt.N+1, limit)
	return &RetryError{Step: r.Step, Attempt: r.Attempt.N, After: after, Err: cause}
}

// heldBack records a round of a step that our own shared rate limit held
// back entirely (heldBackError): nothing was tried, so its attempt is
// handed back, as a stopped step's is, and the step is tried again after
// HeldBackRetryDelay of the rounds so far; people are told it waits, not
// that it failed. r is the run as stored, read under the lease, with what
// the round spent recorded.
func (e *Engine) heldBack(ctx context.Context, r *Run, msg string, cause error) error {
	r.Attempt.HeldBack++
	r.Attempt.N = max(r.Attempt.N-1, 0)
	after := HeldBackRetryDelay(r.Attempt.HeldBack)
	r.trace(e.cfg.Clock.Now(), r.Step, "held back by our shared rate limit (round %d of %d): %s", r.Attempt.HeldBack, MaxHeldBackRounds, msg)
	e.log.Info("step held back by our shared rate limit", "run", r.ID, "step", r.Step, "round", r.Attempt.HeldBack, "err", cause)
	if err := e.save(ctx, r); err != nil {
		return err
	}
	e.notice(ctx, r, "the %s step is waiting: the rate limit every run shares for the search services has no room just now, so none of its searches could be made; trying again in %s", r.Step, roundWait(after))
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
