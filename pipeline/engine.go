package pipeline

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
)

// ErrNotCurrent is returned when a decision names a checkpoint that is not the
// one the run waits on (superseded, or the run has finished or was cancelled).
var ErrNotCurrent = errors.New("this checkpoint is no longer current")

// ErrRunFinished is returned when a finished run is asked to change.
var ErrRunFinished = errors.New("the run has already finished")

// MinQuestionRunes and MaxQuestionRunes bound the length of a research
// question (seed 001: 10 to 2000 characters).
const (
	MinQuestionRunes = 10
	MaxQuestionRunes = 2000
)

// InvalidRequestError says why a request was refused, for people.
type InvalidRequestError struct{ Problems []string }

func (e *InvalidRequestError) Error() string {
	return "invalid research request: " + strings.Join(e.Problems, "; ")
}

// Config wires an Engine. Store, Queue, Locker, Model, Searcher and Fetcher
// are required; Presenters maps Origin.Kind to the presenter of those runs.
type Config struct {
	Store      Store
	Queue      Queue
	Locker     Locker
	Model      Model
	Searcher   Searcher
	Fetcher    Fetcher
	Presenters map[string]Presenter
	// AutoDeciders by Origin.Kind decide the checkpoints of those runs at
	// once (unattended runs, such as a stream's digests) when they can;
	// every other checkpoint is shown and waits for a person.
	AutoDeciders map[string]AutoDecider
	// Prices gives a plan's estimate the model's prices; nil counts its
	// cost as 0 (unknown).
	Prices Pricer
	// Defaults fills the zero fields of a request's Limits.
	Defaults Limits
	// Writing fills the zero fields of a request's Writing.
	Writing Writing
	// DefaultQueue is the queue of runs whose Origin names none.
	DefaultQueue string
	// SearchConcurrency and FetchConcurrency bound parallel calls within a
	// run; 0 means all of a step's searches (or fetches) at once: the plan
	// and MaxSources bound them, each search backend's rate limit and the
	// fetcher's per-host limit pace them, and a step waits for its slowest
	// call only once.
	SearchConcurrency int
	FetchConcurrency  int
	// ModelWait bounds the time one step waits for a model that does not
	// answer, over all its attempts (LLM_STEP_WAIT); past it the step fails
	// for good with "the model did not answer within …". 0 means no bound.
	ModelWait time.Duration
	// Observer receives events for metrics; nil means none.
	Observer Observer
	// Tracer records each run as one trace; nil means none.
	Tracer Tracer
	// Clock is the engine's one time source: the times a run records, its
	// timeouts and due times, and the waits between attempts (a wake-up the
	// queue refused, a decision whose save has an unknown outcome; timers
	// tagged "pipeline", "retry"); nil means the real clock.
	Clock  quartz.Clock
	Logger *slog.Logger
	// NewID makes run ids; nil means a random id.
	NewID func() string
}

// Observer receives what a run does, for metrics. Implementations must be fast.
type Observer interface {
	StepDone(step Step, d time.Duration, err error)
	LLMUsage(role Role, u Usage)
	RunFinished(status Status)
	CheckpointDecided(defID string, action checkpoints.Action, waited time.Duration)
}

// Engine advances runs. It is safe for concurrent use by many workers, in
// many processes sharing one Store.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	steps stepTable
	// seededAt is when SeedDefinitions last found every built-in stored
	// (Unix ns on the engine's clock; 0: never).
	seededAt atomic.Int64
	// countedAtCreate are the runs created here with their first attempt
	// counted, until this process's worker reads them (createRun).
	countedAtCreate countedAtCreate
}

// seedFresh is how long after SeedDefinitions found every built-in stored
// a new run does not look again: a terminal run's process seeds at start
// and creates its run a moment later.
const seedFresh = time.Second

// New checks the configuration and returns an Engine.
func New(cfg Config) (*Engine, error) {
	var missing []string
	if cfg.Store == nil {
		missing = append(missing, "Store")
	}
	if cfg.Queue == nil {
		missing = append(missing, "Queue")
	}
	if cfg.Locker == nil {
		missing = append(missing, "Locker")
	}
	if cfg.Model == nil {
		missing = append(missing, "Model")
	}
	if cfg.Searcher == nil {
		missing = append(missing, "Searcher")
	}
	if cfg.Fetcher == nil {
		missing = append(missing, "Fetcher")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("pipeline: engine needs %s", strings.Join(missing, ", "))
	}
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewID == nil {
		cfg.NewID = NewRunID
	}
	cfg.DefaultQueue = cmp.Or(cfg.DefaultQueue, "runs")
	cfg.Defaults = cfg.Defaults.withDefaults()
	e := &Engine{cfg: cfg, log: cfg.Logger}
	e.steps = e.newStepTable()
	return e, nil
}

func (l Limits) withDefaults() Limits {
	if l.MaxIterations <= 0 {
		l.MaxIterations = 3
	}
	if l.MaxGapRounds < 0 {
		l.MaxGapRounds = 0
	} else if l.MaxGapRounds == 0 {
		l.MaxGapRounds = 2
	}
	if l.MaxSourceChars <= 0 {
		l.MaxSourceChars = 6000
	}
	if l.MaxSourceTokens <= 0 {
		l.MaxSourceTokens = 30000
	}
	return l
}

// merge fills the zero fields of l from d.
func (l Limits) merge(d Limits) Limits {
	l.MaxIterations = cmp.Or(l.MaxIterations, d.MaxIterations)
	l.MaxGapRounds = cmp.Or(l.MaxGapRounds, d.MaxGapRounds)
	l.MaxCostUSD = cmp.Or(l.MaxCostUSD, d.MaxCostUSD)
	l.MaxWall = cmp.Or(l.MaxWall, d.MaxWall)
	l.MaxSources = cmp.Or(l.MaxSources, d.MaxSources)
	l.MaxSourceChars = cmp.Or(l.MaxSourceChars, d.MaxSourceChars)
	l.MaxSourceTokens = cmp.Or(l.MaxSourceTokens, d.MaxSourceTokens)
	l.MaxSearchErrors = cmp.Or(l.MaxSearchErrors, d.MaxSearchErrors)
	return l
}

// NewRunID returns a short random run id such as "r-k3j9x2m4qp".
func NewRunID() string { return "r-" + randomToken(6) }

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// newInstanceID makes an opaque, unguessable checkpoint id that names its run.
func newInstanceID(runID string) string { return runID + "." + randomToken(10) }

// RunIDOf returns the run id an instance id belongs to ("" when malformed).
func RunIDOf(instanceID string) string {
	i := strings.LastIndexByte(instanceID, '.')
	if i <= 0 {
		return ""
	}
	return instanceID[:i]
}

// ValidateRequest lists every problem with a request at once (nil if none).
func ValidateRequest(req Request) error {
	var p []string
	q := strings.TrimSpace(req.Question)
	switch {
	case q == "":
		p = append(p, "the question is empty")
	case utf8.RuneCountInString(q) < MinQuestionRunes:
		p = append(p, fmt.Sprintf("the question %q is too short to research (it needs at least %d characters): ask a whole question, e.g. \"How well do heat pumps work in cold climates?\"", q, MinQuestionRunes))
	case utf8.RuneCountInString(q) > MaxQuestionRunes:
		p = append(p, fmt.Sprintf("the question is %d characters long; the limit is %d", utf8.RuneCountInString(q), MaxQuestionRunes))
	}
	switch req.Mode {
	case "", checkpoints.ModeAuto, checkpoints.ModeGuided, checkpoints.ModeFull:
	default:
		p = append(p, fmt.Sprintf("unknown mode %q (use auto, guided or full)", req.Mode))
	}
	if _, ok := ParseDepth(string(req.Depth)); !ok {
		p = append(p, fmt.Sprintf("unknown depth %q (use quick, standard or comprehensive)", req.Depth))
	}
	if req.Limits.MaxCostUSD < 0 {
		p = append(p, "max cost must not be negative")
	}
	if req.Limits.MaxIterations < 0 {
		p = append(p, "max iterations must not be negative")
	}
	p = append(p, validateFiles(req.Files)...)
	if _, err := req.Domains.Normalize(); err != nil {
		p = append(p, strings.Split(err.Error(), "\n")...)
	}
	if len(p) > 0 {
		return &InvalidRequestError{Problems: p}
	}
	return nil
}

// Start validates a request, stores the new run and queues it.
func (e *Engine) Start(ctx context.Context, req Request) (*Run, error) {
	id := req.ID
	if id == "" {
		id = e.cfg.NewID()
	}
	if req.FollowUpOf != "" {
		if err := e.claimFollowUp(ctx, &req, id); err != nil {
			return nil, err
		}
	}
	r, err := e.create(ctx, req, id)
	if err != nil && req.FollowUpOf != "" {
		e.releaseFollowUp(ctx, req.FollowUpOf, id)
	}
	return r, err
}

// create validates a request, stores the new run with id and queues it.
func (e *Engine) create(ctx context.Context, req Request, id string) (*Run, error) {
	if err := ValidateRequest(req); err != nil {
		return nil, err
	}
	if at := e.seededAt.Load(); at == 0 || e.cfg.Clock.Now().Sub(time.Unix(0, at)) >= seedFresh {
		if err := e.SeedDefinitions(ctx); err != nil {
			return nil, err
		}
	}
	depth, _ := ParseDepth(string(req.Depth))
	domains, _ := req.Domains.Normalize() // validated above
	mode := req.Mode
	mode = cmp.Or(mode, checkpoints.ModeGuided)
	now := e.cfg.Clock.Now()
	r := &Run{
		ID:            id,
		Parent:        FollowUpRun(req.FollowUpOf),
		Question:      strings.TrimSpace(req.Question),
		Context:       req.Context,
		Mode:          mode,
		Depth:         depth,
		RequestedBy:   req.RequestedBy,
		Origin:        req.Origin,
		Limits:        req.Limits.merge(e.cfg.Defaults),
		Since:         req.Since,
		Known:         req.Known,
		Writing:       req.Writing.merge(e.cfg.Writing),
		ReviewSources: req.ReviewSources,
		Domains:       domains,
		Files:         slices.Clone(req.Files),
		Audience:      req.Audience,
		PersonToken:   req.PersonToken,
		Status:        StatusQueued,
		Step:          StepPlan,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	r.Origin.Queue = cmp.Or(r.Origin.Queue, e.cfg.DefaultQueue)
	e.traceRun(ctx, r)
	r.trace(now, StepPlan, "run created")
	if req.Held {
		r.Status, r.Held = StatusInterrupted, true
		r.trace(now, StepPlan, "held until its starter shows where it runs")
	}
	if err := e.createRun(ctx, r); err != nil {
		return nil, fmt.Errorf("store the new run: %w", err)
	}
	if r.Held {
		return r, nil
	}
	// A run the queue did not take is still in the store's index of runs
	// with work: a claim pass takes it.
	e.wake(ctx, r)
	return r, nil
}

// SeedDefinitions stores the built-in checkpoint definitions that are not
// stored yet. Stored definitions (perhaps edited by an operator) are kept:
// each built-in is created only if its id is free, so replicas starting
// together, or an admin editing meanwhile, never lose an edit. The assembly
// calls it at start; a new run calls it again (unless it ran less than a
// second before, seedFresh), so a Redis emptied under a running process
// gets its built-ins back before a run needs them.
func (e *Engine) SeedDefinitions(ctx context.Context) error {
	have, err := e.cfg.Store.Definitions(ctx)
	if err != nil {
		return fmt.Errorf("load checkpoint definitions: %w", err)
	}
	known := map[string]bool{}
	for _, d := range have {
		known[d.ID] = true
	}
	now := e.cfg.Clock.Now()
	builtins := checkpoints.Builtins(now)
	if len(have) == 0 {
		// A store with no definition at all (a fresh Redis) takes them all
		// in one step, while it still has none: no edit can be lost.
		done, err := e.cfg.Store.CreateDefinitionsIfNone(ctx, builtins)
		if err != nil {
			return fmt.Errorf("seed checkpoint definitions: %w", err)
		}
		if done {
			e.seededAt.Store(now.UnixNano())
			return nil
		}
	}
	for _, d := range builtins {
		if known[d.ID] {
			continue
		}
		err := e.cfg.Store.CreateDefinition(ctx, d)
		if err != nil && !errors.Is(err, checkpoints.ErrDefinitionExists) {
			return fmt.Errorf("seed checkpoint definition %s: %w", d.ID, err)
		}
	}
	e.seededAt.Store(now.UnixNano())
	return nil
}

// Load returns a run.
func (e *Engine) Load(ctx context.Context, runID string) (*Run, error) {
	return e.cfg.Store.Load(ctx, runID)
}

// List returns runs, newest first.
func (e *Engine) List(ctx context.Context, f RunFilter) ([]*Run, error) {
	return e.cfg.Store.List(ctx, f)
}

// Current returns the checkpoint instance the run waits on, or nil.
func (r *Run) Current() *checkpoints.Instance {
	if r.Waiting == "" {
		return nil
	}
	return r.Instance(r.Waiting)
}

// Instance returns the run's checkpoint instance with this id, or nil.
func (r *Run) Instance(id string) *checkpoints.Instance {
	for i := range r.Checkpoints {
		if r.Checkpoints[i].ID == id {
			return &r.Checkpoints[i]
		}
	}
	return nil
}

func (r *Run) trace(at time.Time, step Step, format string, args ...any) {
	r.Trace = append(r.Trace, TraceEntry{At: at, Step: step, Message: fmt.Sprintf(format, args...)})
}

func (r *Run) recordError(at time.Time, step Step, kind, msg string) {
	r.Errors = append(r.Errors, RunError{At: at, Step: step, Kind: kind, Message: msg})
}

func (r *Run) addBound(msg string) {
	for _, b := range r.Bounds {
		if b == msg {
			return
		}
	}
	r.Bounds = append(r.Bounds, msg)
}

func (e *Engine) presenter(r *Run) Presenter {
	if p, ok := e.cfg.Presenters[r.Origin.Kind]; ok {
		return p
	}
	return nopPresenter{}
}

// nopPresenter is used for runs whose origin has no presenter in this process.
type nopPresenter struct{}

func (nopPresenter) Offer(context.Context, *Run, *checkpoints.Instance) error   { return nil }
func (nopPresenter) Decided(context.Context, *Run, *checkpoints.Instance) error { return nil }
func (nopPresenter) Progress(context.Context, *Run)                             {}
func (nopPresenter) Finished(context.Context, *Run) error                       { return nil }
func (nopPresenter) RemindersStopped(context.Context, *Run, *checkpoints.Instance) error {
	return nil
}
func (nopPresenter) Notice(context.Context, *Run, string) {}
func (nopPresenter) Stranded(context.Context, *Run, *checkpoints.Instance) error {
	return nil
}
func (nopPresenter) BreakerTripped(context.Context, checkpoints.Definition, int) error { return nil }
