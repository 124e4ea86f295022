package scheduler

// The Service, its configuration, and managing streams: create, list, show,
// pause, resume, set the policy, delete.

import (
	"context"
	"crypto/rand"
	"encoding/base32"
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
