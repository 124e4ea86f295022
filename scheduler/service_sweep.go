package scheduler

// The digest in flight: a finished run is recorded, one stuck past
// MaxDigestDuration (of working time, or without progress) is swept.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// checkRunning looks at the digest in flight of st: a finished run is recorded, a
// stuck one swept. It returns the stream as it now is.
func (s *Service) checkRunning(ctx context.Context, st *Stream, now time.Time) (*Stream, error) {
	limit := s.cfg.MaxDigestDuration
	if st.Running == runningStarting {
		rec := st.digestFor("")
		if rec != nil && now.Sub(rec.StartedAt) <= limit {
			return st, nil
		}
		return s.sweep(ctx, st.ID, runningStarting, "its run was never created")
	}
	run, err := s.cfg.Runner.Load(ctx, st.Running)
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		return s.sweep(ctx, st.ID, st.Running, "its run no longer exists")
	case err != nil:
		return st, fmt.Errorf("load digest run %s: %w", st.Running, err)
	case run.Status.Final() && run.Presented:
		if err := recordOutcome(ctx, s.cfg.Store, run, now, ""); err != nil {
			return st, err
		}
		s.log.Info("finished digest recorded by the scheduler", "stream", st.ID, "run", run.ID, "status", run.Status)
		return s.cfg.Store.Get(ctx, st.ID)
	case run.Status.Final():
		// Finished but not shown yet: the engine keeps trying to post it, and
		// it is recorded (Known included) only once it was posted.
		if idle := now.Sub(lastProgress(st, run)); idle > limit {
			return s.sweep(ctx, st.ID, run.ID, fmt.Sprintf("it finished (%s) but could not be posted for %s", run.Status, idle.Round(time.Second)))
		}
		return st, nil
	case run.Status == pipeline.StatusWaiting:
		return st, nil // waiting for the owner (held draft): bounded by the checkpoint's timeout
	}
	// Working time excludes waits for people; a run that makes no progress at
	// all (a hung step, a lost queue entry) is caught by the time since its
	// last save or decision.
	idle := now.Sub(lastProgress(st, run))
	if run.Active <= limit && idle <= limit {
		return st, nil
	}
	why := fmt.Sprintf("still %s after %s of working time", run.Status, run.Active.Round(time.Second))
	if idle > limit {
		why = fmt.Sprintf("still %s with no progress for %s", run.Status, idle.Round(time.Second))
	}
	out, err := s.sweep(ctx, st.ID, run.ID, why)
	if err != nil {
		return out, err
	}
	if err := s.cfg.Runner.Cancel(ctx, run.ID, "scheduler"); err != nil && !errors.Is(err, pipeline.ErrRunFinished) {
		s.log.Warn("cancel swept digest run", "stream", st.ID, "run", run.ID, "err", err)
	}
	return out, nil
}

// lastProgress is when the digest run last moved: its last save or the latest
// decision on one of its checkpoints, whichever is later; failing both, when
// its digest started.
func lastProgress(st *Stream, run *pipeline.Run) time.Time {
	last := run.UpdatedAt
	for _, c := range run.Checkpoints {
		if c.Decision != nil && c.Decision.At.After(last) {
			last = c.Decision.At
		}
	}
	if last.IsZero() {
		last = run.CreatedAt
		if rec := st.digestFor(run.ID); rec != nil && !rec.StartedAt.IsZero() {
			last = rec.StartedAt
		}
	}
	return last
}

// sweep gives up the digest in flight (running is its run id or runningStarting):
// its record is marked swept with why, Running is cleared, and it is reported.
func (s *Service) sweep(ctx context.Context, id, running, why string) (*Stream, error) {
	var out *Stream
	err := updateStream(ctx, s.cfg.Store, id, func(st *Stream) (bool, error) {
		out = st
		if st.Running != running {
			return false, nil
		}
		st.Running = ""
		rec := st.digestFor(running)
		if running == runningStarting {
			rec = st.digestFor("")
		}
		if rec != nil {
			rec.Status = DigestSwept
			rec.FinishedAt = s.cfg.Clock.Now()
			rec.Note = clipNote(fmt.Sprintf("swept: no result within %s of work (%s)", s.cfg.MaxDigestDuration, why))
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Warn("digest stuck past the maximum duration: swept", "stream", id, "run", running, "max", s.cfg.MaxDigestDuration, "why", why)
	return out, nil
}
