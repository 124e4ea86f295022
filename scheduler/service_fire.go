package scheduler

// Starting digests: on schedule (Run, Tick; each fire claimed so that one
// replica handles it) and on demand (RunNow).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// RunOptions say where a digest started by RunNow goes.
type RunOptions struct {
	// DryRun makes a preview digest: it is recorded as a dry run, and neither
	// counts as the previous digest (Since) nor adds to Known.
	DryRun bool
	// Channel and ThreadTS are where the digest is posted; "" means the stream's
	// channel, and a new message there.
	Channel  string
	ThreadTS string
}

// RunNow starts a digest of the named stream now, outside the schedule (which it
// does not change). Only the owner or an admin may run it (ErrNotAllowed); when a
// digest is still running it returns ErrDigestRunning.
func (s *Service) RunNow(ctx context.Context, name, actor string, isAdmin bool, opt RunOptions) (*pipeline.Run, error) {
	st, err := s.cfg.Store.GetByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if !st.CanChange(actor, isAdmin) {
		return nil, fmt.Errorf("%w (stream %q belongs to %s)", ErrNotAllowed, st.Spec.Name, st.Owner)
	}
	now := s.cfg.Clock.Now()
	if st.Running != "" {
		if st, err = s.checkRunning(ctx, st, now); err != nil {
			return nil, err
		}
	}
	trigger := TriggerRunNow
	if opt.DryRun {
		trigger = TriggerDryRun
	}
	var snap *Stream
	err = updateStream(ctx, s.cfg.Store, st.ID, func(st *Stream) (bool, error) {
		if st.Running != "" {
			return false, fmt.Errorf("%w (run %s)", ErrDigestRunning, st.Running)
		}
		st.Running = runningStarting
		st.addDigest(DigestRecord{FireAt: now, Trigger: trigger, StartedAt: now, Status: DigestStarting})
		snap = st.Clone()
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return s.startDigest(ctx, snap, now, opt)
}

// Run makes a pass at once and then every interval of the clock until ctx
// ends, then returns nil. The caller owns the goroutine it runs in.
func (s *Service) Run(ctx context.Context) error {
	pass := func() error {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("stream scheduling pass", "err", err)
		}
		return nil
	}
	_ = pass()
	// A pass never stops the ticker: it ends with ctx.
	_ = s.cfg.Clock.TickerFunc(ctx, s.cfg.Tick, pass, "scheduler", "tick").Wait()
	return nil
}

// Tick is one scheduling pass over every stream at the injected clock's now:
//   - a digest in flight whose run has finished is recorded (if its presenter
//     could not), and one stuck past MaxDigestDuration (of working time, or
//     without progress) is swept: marked swept in
//     the stream's record, reported through the Logger, and asked to cancel;
//   - an active stream whose schedule is due gets at most one digest, for the
//     latest scheduled time (after downtime: one catch-up, not a burst). The fire
//     is claimed in the Store first, so that across replicas exactly one Service
//     handles it; if the stream's previous digest is still running, the fire is
//     recorded as skipped instead.
//
// Errors of single streams do not stop the pass; they are returned together.
func (s *Service) Tick(ctx context.Context) error {
	all, err := s.cfg.Store.List(ctx)
	if err != nil {
		return fmt.Errorf("list streams: %w", err)
	}
	now := s.cfg.Clock.Now()
	var errs []error
	for _, st := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.tickStream(ctx, st, now); err != nil && !errors.Is(err, ErrStreamNotFound) {
			s.log.Warn("stream tick", "stream", st.ID, "err", err)
			errs = append(errs, fmt.Errorf("stream %s: %w", st.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) tickStream(ctx context.Context, st *Stream, now time.Time) error {
	if st.Running != "" {
		var err error
		if st, err = s.checkRunning(ctx, st, now); err != nil {
			return err
		}
	}
	if st.Paused {
		return nil
	}
	base := st.LastFire
	if base.Before(st.CreatedAt) {
		base = st.CreatedAt // nothing is owed from before the stream existed
	}
	fire, due := DueFires(st.Spec.Schedule(), base, now)
	if !due {
		return nil
	}
	ok, err := s.cfg.Store.ClaimFire(ctx, st.ID, fire, s.cfg.ClaimTTL)
	if err != nil || !ok {
		return err // !ok: another replica has this fire
	}
	return s.fire(ctx, st.ID, fire, now)
}

// fire handles a claimed scheduled fire: it advances LastFire and either records a
// skip (a digest is still running) or starts the digest.
func (s *Service) fire(ctx context.Context, id string, fire, now time.Time) error {
	var snap *Stream
	var skippedFor string
	err := updateStream(ctx, s.cfg.Store, id, func(st *Stream) (bool, error) {
		snap, skippedFor = nil, ""
		if !st.LastFire.Before(fire) || st.Paused {
			return false, nil // handled already, or paused meanwhile
		}
		st.LastFire = fire
		st.NextFire = s.nextFire(st, now)
		if st.Running != "" {
			skippedFor = st.Running
			if skippedFor == runningStarting {
				skippedFor = "being started"
			}
			st.addDigest(DigestRecord{
				FireAt: fire, Trigger: TriggerSchedule, Status: DigestSkipped,
				Skipped: "the previous digest (run " + skippedFor + ") was still running",
			})
			return true, nil
		}
		st.Running = runningStarting
		st.addDigest(DigestRecord{FireAt: fire, Trigger: TriggerSchedule, StartedAt: now, Status: DigestStarting})
		snap = st.Clone()
		return true, nil
	})
	if err != nil {
		return err
	}
	if skippedFor != "" {
		s.log.Info("digest skipped: the previous one is still running", "stream", id, "fire", fire, "running", skippedFor)
		return nil
	}
	if snap == nil {
		return nil
	}
	_, err = s.startDigest(ctx, snap, fire, RunOptions{})
	return err
}

// startDigest starts the run of the digest recorded as starting in snap at fireAt,
// and writes its run id back into the stream.
func (s *Service) startDigest(ctx context.Context, snap *Stream, fireAt time.Time, opt RunOptions) (*pipeline.Run, error) {
	req := DigestRequest(*snap, fireAt)
	req.Origin.Queue = s.cfg.Queue
	req.Limits = s.cfg.Limits
	req.Depth = s.cfg.Depth
	if opt.Channel != "" {
		req.Origin.Channel = opt.Channel
	}
	req.Origin.ThreadTS = opt.ThreadTS
	if opt.DryRun {
		req.Known = pipeline.Known{}
	}
	run, startErr := s.cfg.Runner.Start(ctx, req)
	if run == nil {
		if startErr == nil {
			startErr = errors.New("the runner returned no run")
		}
		err := updateStream(ctx, s.cfg.Store, snap.ID, func(st *Stream) (bool, error) {
			rec := st.digestFor("")
			if rec == nil {
				return false, nil
			}
			rec.Status = DigestFailed
			rec.FinishedAt = s.cfg.Clock.Now()
			rec.Note = clipNote("the digest could not be started: " + startErr.Error())
			if st.Running == runningStarting {
				st.Running = ""
			}
			return true, nil
		})
		s.log.Warn("start digest", "stream", snap.ID, "err", startErr)
		return nil, errors.Join(fmt.Errorf("start digest of stream %s: %w", snap.ID, startErr), err)
	}
	if startErr != nil { // created but not queued: the run exists, the sweeper watches it
		s.log.Warn("digest run created but not queued", "stream", snap.ID, "run", run.ID, "err", startErr)
	}
	err := updateStream(ctx, s.cfg.Store, snap.ID, func(st *Stream) (bool, error) {
		rec := st.digestFor(run.ID)
		if rec == nil || rec.Status.Final() {
			return false, nil // already finished and recorded by the presenter
		}
		rec.RunID = run.ID
		rec.Status = DigestRunning
		if st.Running == runningStarting {
			st.Running = run.ID
		}
		return true, nil
	})
	if err != nil {
		s.log.Warn("record digest run", "stream", snap.ID, "run", run.ID, "err", err)
	}
	s.log.Info("digest started", "stream", snap.ID, "run", run.ID, "fire", fireAt)
	return run, err
}
