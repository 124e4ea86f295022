package pipeline

// How a run ends: its outcome shown (finished, tried again until it is
// shown or given up), cancelled, ended early with a partial report or a
// failure, or failed by the queue (Fail).

import (
	"context"
	"errors"
	"fmt"
)

// maxPresentAttempts bounds how often a finished run's outcome is offered to
// a presenter that keeps failing (e.g. the bot was removed from the channel).
const maxPresentAttempts = 8

// finishesSilently reports whether the run's presenter shows nothing when
// the run finishes (SilentFinisher).
func (e *Engine) finishesSilently(r *Run) bool {
	sf, ok := e.presenter(r).(SilentFinisher)
	return ok && sf.FinishesSilently()
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
