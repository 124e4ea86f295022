package scheduler

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/pipeline"
)

// Runner starts and loads research runs; *pipeline.Engine implements it.
type Runner interface {
	Start(ctx context.Context, req pipeline.Request) (*pipeline.Run, error)
	Load(ctx context.Context, id string) (*pipeline.Run, error)
	// Cancel stops a run; the sweeper uses it to stop a stuck digest.
	Cancel(ctx context.Context, runID, by string) error
}

// Defaults of ServiceConfig.
const (
	DefaultTickInterval      = time.Minute
	DefaultMaxDigestDuration = 2 * time.Hour
	DefaultClaimTTL          = 15 * time.Minute
)

// ServiceConfig wires a Service. Store and Runner are required.
type ServiceConfig struct {
	Store  Store
	Runner Runner
	// Clock is the service's one time source: the times streams and digests
	// record, schedules' due times, and Run's passes (a ticker tagged
	// "scheduler", "tick"); nil means the real clock. Tests pass a quartz
	// mock and advance it to drive Run.
	Clock  quartz.Clock
	Logger *slog.Logger
	// Queue is the work queue of digest runs ("" = the engine's default queue).
	Queue string
	// MaxDigestDuration is how much working time a digest may take (run.Active:
	// waits for a person excluded), and how long it may go without progress (no
	// save, no decision), before the sweeper gives it up. A digest waiting for its
	// owner is never swept. Default DefaultMaxDigestDuration.
	MaxDigestDuration time.Duration
	// Tick is the interval of Run's scheduling passes. Default DefaultTickInterval.
	Tick time.Duration
	// ClaimTTL is how long a fire's exactly-once claim lasts. It only needs to cover
	// the moment between the claim and the stream's LastFire being saved; a replica
	// that dies in between leaves the fire to be claimed again after ClaimTTL.
	// Default DefaultClaimTTL.
	ClaimTTL time.Duration
	// Limits and Depth of digest runs (zero values: the engine's defaults).
	Limits pipeline.Limits
	Depth  pipeline.Depth
	// NewID makes stream ids; nil means random ids such as "s-k3j9x2m4qp".
	NewID func() string
}

// Service is the research-stream service: it creates and manages streams, fires
// their digests on schedule (exactly once across replicas sharing one Store),
// and sweeps digests that got stuck. It is safe for concurrent use.
type Service struct {
	cfg ServiceConfig
	log *slog.Logger
}

// NewService checks the configuration and returns a Service.
func NewService(cfg ServiceConfig) (*Service, error) {
	var missing []string
	if cfg.Store == nil {
		missing = append(missing, "Store")
	}
	if cfg.Runner == nil {
		missing = append(missing, "Runner")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("scheduler: service needs %s", strings.Join(missing, ", "))
	}
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxDigestDuration <= 0 {
		cfg.MaxDigestDuration = DefaultMaxDigestDuration
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTickInterval
	}
	if cfg.ClaimTTL <= 0 {
		cfg.ClaimTTL = DefaultClaimTTL
	}
	if cfg.NewID == nil {
		cfg.NewID = newStreamID
	}
	return &Service{cfg: cfg, log: cfg.Logger}, nil
}

func newStreamID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return "s-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Create validates spec and stores a new stream owned by owner, with policy auto.
// Its first digest is the first scheduled time after now. Errors: the spec's
// validation error (wrapping ErrIncompleteSpec), ErrNameTaken.
func (s *Service) Create(ctx context.Context, spec Spec, owner string) (*Stream, error) {
	owner = strings.TrimSpace(owner)
	if owner == "" {
		owner = strings.TrimSpace(spec.Owner)
	}
	now := s.cfg.Clock.Now()
	spec = spec.clone()
	spec.Owner = owner
	if spec.CreatedAt.IsZero() {
		spec.CreatedAt = now
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	next, err := NextFire(spec.Schedule(), now)
	if err != nil {
		return nil, err
	}
	st := &Stream{
		ID: s.cfg.NewID(), Spec: spec, Owner: owner, CreatedAt: now,
		Policy: PolicyAuto, NextFire: next,
	}
	if err := s.cfg.Store.Create(ctx, st); err != nil {
		return nil, err
	}
	s.log.Info("stream created", "stream", st.ID, "owner", owner)
	return st, nil
}

// List returns every stream, sorted by name.
func (s *Service) List(ctx context.Context) ([]*Stream, error) {
	all, err := s.cfg.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b *Stream) int { return strings.Compare(NameKey(a.Spec.Name), NameKey(b.Spec.Name)) })
	return all, nil
}

// Show returns the stream with this name (ErrStreamNotFound if none), with
// NextFire brought up to date (zero while paused).
func (s *Service) Show(ctx context.Context, name string) (*Stream, error) {
	st, err := s.cfg.Store.GetByName(ctx, name)
	if err != nil {
		return nil, err
	}
	st.NextFire = s.nextFire(st, s.cfg.Clock.Now())
	return st, nil
}

// nextFire is the next scheduled time of st after now, zero while paused.
func (s *Service) nextFire(st *Stream, now time.Time) time.Time {
	if st.Paused {
		return time.Time{}
	}
	after := now
	if st.LastFire.After(after) {
		after = st.LastFire
	}
	next, err := NextFire(st.Spec.Schedule(), after)
	if err != nil {
		return time.Time{}
	}
	return next
}

// change applies f to the named stream if actor may change it.
func (s *Service) change(ctx context.Context, name, actor string, isAdmin bool, f func(st *Stream, now time.Time)) (*Stream, error) {
	st, err := s.cfg.Store.GetByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if !st.CanChange(actor, isAdmin) {
		return nil, fmt.Errorf("%w (stream %q belongs to %s)", ErrNotAllowed, st.Spec.Name, st.Owner)
	}
	var out *Stream
	err = updateStream(ctx, s.cfg.Store, st.ID, func(st *Stream) (bool, error) {
		f(st, s.cfg.Clock.Now())
		out = st
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Pause stops the stream's digests until it is resumed. Only the owner or an
// admin may pause (ErrNotAllowed). Pausing a paused stream changes nothing.
func (s *Service) Pause(ctx context.Context, name, actor string, isAdmin bool) (*Stream, error) {
	return s.change(ctx, name, actor, isAdmin, func(st *Stream, _ time.Time) {
		st.Paused = true
		st.NextFire = time.Time{}
	})
}

// Resume restarts a paused stream's digests. Fires missed while it was paused are
// not caught up: the next digest is the next scheduled time after now, and it
// reports what is new since the last digest. Only the owner or an admin may resume.
func (s *Service) Resume(ctx context.Context, name, actor string, isAdmin bool) (*Stream, error) {
	return s.change(ctx, name, actor, isAdmin, func(st *Stream, now time.Time) {
		if !st.Paused {
			return
		}
		st.Paused = false
		if now.After(st.LastFire) {
			st.LastFire = now
		}
		st.NextFire = s.nextFire(st, now)
	})
}

// SetPolicy sets the stream's checkpoint policy (ErrBadPolicy when unknown). Only
// the owner or an admin may change it.
func (s *Service) SetPolicy(ctx context.Context, name, actor string, isAdmin bool, p Policy) (*Stream, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("%w: %q", ErrBadPolicy, p)
	}
	return s.change(ctx, name, actor, isAdmin, func(st *Stream, _ time.Time) { st.Policy = p })
}

// Delete removes the stream and returns it as it was. Only the owner or an admin
// may delete (ErrNotAllowed). A digest in flight still finishes and is posted.
func (s *Service) Delete(ctx context.Context, name, actor string, isAdmin bool) (*Stream, error) {
	st, err := s.cfg.Store.GetByName(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.delete(ctx, st, actor, isAdmin)
}

// DeleteByID is Delete for the stream with this id: a confirmation made for one
// stream can never delete another that took its name later (ErrStreamNotFound).
func (s *Service) DeleteByID(ctx context.Context, id, actor string, isAdmin bool) (*Stream, error) {
	st, err := s.cfg.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.delete(ctx, st, actor, isAdmin)
}

func (s *Service) delete(ctx context.Context, st *Stream, actor string, isAdmin bool) (*Stream, error) {
	if !st.CanChange(actor, isAdmin) {
		return nil, fmt.Errorf("%w (stream %q belongs to %s)", ErrNotAllowed, st.Spec.Name, st.Owner)
	}
	if err := s.cfg.Store.Delete(ctx, st.ID); err != nil {
		return nil, err
	}
	s.log.Info("stream deleted", "stream", st.ID, "by", actor)
	return st, nil
}

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
