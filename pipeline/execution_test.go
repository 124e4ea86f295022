package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestMain checks that the engine leaves no goroutine behind (the lease
// refreshers included).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// These tests drive the Engine directly, against the real store and lease
// on a private redis-server, with the queue recorded instead of served: the
// test decides which worker runs when, so interleavings are exact.

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// queue records wake-ups and the deadlines announced; fail makes Wake
// fail. When store is set, a wake-up records the run's stored version
// with its id ("r-1:v3"): the version the woken worker will read.
type queue struct {
	mu        sync.Mutex
	store     pipeline.Store
	wakes     []string
	deadlines []time.Time
	fail      error
}

func (q *queue) Wake(ctx context.Context, _, runID string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	w := runID
	if q.store != nil {
		r, err := q.store.Load(ctx, runID)
		if err != nil {
			return err
		}
		w = fmt.Sprintf("%s:v%d", runID, r.Version)
	}
	q.wakes = append(q.wakes, w)
	return nil
}

// RunsHereAtOnce: no run of this queue is created with its lease taken.
func (q *queue) RunsHereAtOnce(string) bool { return false }

func (q *queue) WakeAt(_ context.Context, _ string, at time.Time) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deadlines = append(q.deadlines, at)
	return nil
}

func (q *queue) woken() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.wakes...)
}

// presenter records what it was asked to show; when gate is set, Offer
// says so on offering and waits for the gate (a slow Slack post); when
// offerErr is set, Offer fails with it (Slack refusing the post).
type presenter struct {
	mu       sync.Mutex
	offers   int
	decided  int
	finished []*pipeline.Run
	offering chan struct{}
	gate     chan struct{}
	offerErr error
	stopped  []string // instances whose reminders stopped (escalated)
	// stopFails is how many escalations (RemindersStopped) fail before one
	// succeeds; each call is counted in stopCalls.
	stopFails, stopCalls int
}

func (p *presenter) RemindersStopped(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopCalls++
	if p.stopCalls <= p.stopFails {
		return errors.New("slack: service_unavailable")
	}
	p.stopped = append(p.stopped, inst.ID)
	return nil
}

func (p *presenter) Offer(ctx context.Context, _ *pipeline.Run, _ *checkpoints.Instance) error {
	p.mu.Lock()
	p.offers++
	err := p.offerErr
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if p.gate != nil {
		p.offering <- struct{}{}
		<-p.gate
	}
	return nil
}

func (p *presenter) Decided(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decided++
	return nil
}

func (p *presenter) Progress(context.Context, *pipeline.Run)       {}
func (p *presenter) Notice(context.Context, *pipeline.Run, string) {}
func (p *presenter) Stranded(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}
func (p *presenter) BreakerTripped(context.Context, checkpoints.Definition, int) error { return nil }

func (p *presenter) Finished(_ context.Context, r *pipeline.Run) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = append(p.finished, r)
	return nil
}

// model fails every call with err and counts the calls; each call takes
// took on clock, when set.
type model struct {
	mu    sync.Mutex
	calls int
	err   error
	clock *researchtest.Clock
	took  time.Duration
}

func (m *model) Generate(context.Context, pipeline.Prompt, any) (pipeline.Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.clock != nil {
		m.clock.Advance(m.took)
	}
	return pipeline.Usage{}, m.err
}

type nothing struct{}

func (nothing) Search(context.Context, pipeline.SearchRequest) pipeline.SearchOutcome {
	return pipeline.SearchOutcome{}
}
func (nothing) Fetch(context.Context, string) (pipeline.Document, error) {
	return pipeline.Document{}, errors.New("no web here")
}

type env struct {
	t     *testing.T
	store pipeline.Store
	real  *redisstore.Store
	queue *queue
	pres  *presenter
	model *model
	clock *researchtest.Clock
	eng   *pipeline.Engine

	mu     sync.Mutex
	sleeps []time.Duration // the engine's waits between attempts, in order
}

// steppingClock is the engine's clock: it reads env's clock, and a timer
// (a wait between attempts) is recorded, moves env's clock by its duration
// and fires at once, instead of waiting.
type steppingClock struct {
	*researchtest.Clock
	e *env
}

// NewTimer records d, advances the clock by d and returns a timer that has
// fired.
func (c steppingClock) NewTimer(d time.Duration, tags ...string) *quartz.Timer {
	c.e.mu.Lock()
	c.e.sleeps = append(c.e.sleeps, d)
	c.e.mu.Unlock()
	c.Advance(d)
	return c.Clock.NewTimer(0, tags...)
}

func (e *env) slept() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Duration(nil), e.sleeps...)
}

// newEnv builds an engine on a private redis-server; wrap, when set, wraps
// the store the engine uses (to inject faults).
func newEnv(t *testing.T, wrap func(pipeline.Store) pipeline.Store) *env {
	t.Helper()
	return newEnvWith(t, wrap, nil)
}

// newEnvWith is newEnv with tune, when set, changing the engine's Config.
func newEnvWith(t *testing.T, wrap func(pipeline.Store) pipeline.Store, tune func(*pipeline.Config)) *env {
	t.Helper()
	_, rdb := redistest.Start(t)
	e := &env{t: t, real: redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{}), queue: &queue{}, pres: &presenter{},
		model: &model{err: errors.New("the model at http://127.0.0.1:9/v1 could not be reached (connection refused)")},
		clock: researchtest.NewClock(t0)}
	e.queue.store = e.real
	e.store = e.real
	if wrap != nil {
		e.store = wrap(e.real)
	}
	cfg := pipeline.Config{
		Store: e.store, Queue: e.queue, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: e.model, Searcher: nothing{}, Fetcher: nothing{},
		Presenters: map[string]pipeline.Presenter{"test": e.pres}, Clock: steppingClock{e.clock, e},
		NewID: func() string { return "r-1" },
	}
	if tune != nil {
		tune(&cfg)
	}
	eng, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.eng = eng
	return e
}

// waitingRun stores a run whose next step is the fallback (no model, no
// web), paused before it at a pending checkpoint; optional makes the
// checkpoint skippable (a timeout skips it).
func (e *env) waitingRun(optional bool) checkpoints.Instance {
	e.t.Helper()
	def := checkpoints.Definition{ID: "confirm", Label: "Confirm", Required: !optional, Timeout: time.Hour, MaxRetries: 1}
	inst := checkpoints.NewInstance(def, "r-1.abc", "r-1", nil, nil, nil, t0)
	r := &pipeline.Run{
		ID: "r-1", Question: "q", Mode: checkpoints.ModeGuided, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}, Status: pipeline.StatusWaiting, Step: pipeline.StepFallback,
		FallbackReason: "test", CreatedAt: t0, UpdatedAt: t0,
		Checkpoints: []checkpoints.Instance{inst}, Waiting: inst.ID,
	}
	if err := e.real.Create(context.Background(), r); err != nil {
		e.t.Fatal(err)
	}
	return inst
}

func (e *env) load() *pipeline.Run {
	e.t.Helper()
	r, err := e.real.Load(context.Background(), "r-1")
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// TestWorkThatArrivesWhileAnotherWorkerHoldsTheRunIsNotLost: worker A holds
// the run's lease while it posts a checkpoint; meanwhile a person decides,
// cancels, or the checkpoint's deadline comes, and the worker B that the
// wake-up (or the deadline) sends finds the lease busy and gives up. A reads the run again after releasing
// the lease and does the work, without any queue task or rescue.
func TestWorkThatArrivesWhileAnotherWorkerHoldsTheRunIsNotLost(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		optional bool
		arrive   func(e *env, inst checkpoints.Instance) error
		want     pipeline.Status
	}{
		{"a decision", false, func(e *env, inst checkpoints.Instance) error {
			_, err := e.eng.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
			return err
		}, pipeline.StatusPartial},
		{"a cancellation", false, func(e *env, _ checkpoints.Instance) error {
			return e.eng.Cancel(ctx, "r-1", "U1")
		}, pipeline.StatusCancelled},
		{"a deadline", true, func(e *env, _ checkpoints.Instance) error {
			e.clock.Advance(2 * time.Hour) // the deadline's worker advances the run
			return e.eng.Advance(ctx, "r-1")
		}, pipeline.StatusPartial},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			inst := e.waitingRun(tc.optional)
			e.pres.offering, e.pres.gate = make(chan struct{}), make(chan struct{})
			a := make(chan error, 1)
			go func() { a <- e.eng.Advance(ctx, "r-1") }()
			<-e.pres.offering // A holds the lease, posting the checkpoint

			err := tc.arrive(e, inst) // B's part: it meets the busy lease
			if err != nil && !errors.Is(err, pipeline.ErrLeaseBusy) {
				t.Fatalf("while A holds the run: %v", err)
			}
			if err := e.eng.Advance(ctx, "r-1"); !errors.Is(err, pipeline.ErrLeaseBusy) {
				t.Fatalf("the wake-up's worker: %v, want ErrLeaseBusy", err)
			}
			close(e.pres.gate) // A finishes posting and releases the lease
			if err := <-a; err != nil {
				t.Fatal(err)
			}
			r := e.load()
			if r.Status != tc.want || !r.Presented {
				t.Fatalf("after A returned the run is %s (presented %v), want %s: the work was lost", r.Status, r.Presented, tc.want)
			}
		})
	}
}

// faultyStore wraps the store to fail saves as a network would.
type faultyStore struct {
	pipeline.Store
	mu sync.Mutex
	// save replaces Save; it may call the real one.
	save func(ctx context.Context, r *pipeline.Run, write func() error) error
	// loadErr, when set, fails every Load after a save was attempted.
	loadErr error
	saved   bool
}

func (f *faultyStore) Save(ctx context.Context, r *pipeline.Run) error {
	f.mu.Lock()
	save := f.save
	f.saved = true
	f.mu.Unlock()
	if save == nil {
		return f.Store.Save(ctx, r)
	}
	return save(ctx, r, func() error { return f.Store.Save(ctx, r) })
}

// LoadForStep reads through Load, so that loadErr reaches a worker's
// reads too (the cancel request is the store's own read).
func (f *faultyStore) LoadForStep(ctx context.Context, id string) (*pipeline.Run, string, error) {
	r, err := f.Load(ctx, id)
	if err != nil {
		return nil, "", err
	}
	_, by, err := f.Store.LoadForStep(ctx, id)
	return r, by, err
}

// ProbeForStep answers a probe that never matches a worker's copy, so that
// every step reads the run through LoadForStep (and Load).
func (f *faultyStore) ProbeForStep(context.Context, string) (pipeline.StepProbe, error) {
	return pipeline.StepProbe{}, nil
}

func (f *faultyStore) Load(ctx context.Context, id string) (*pipeline.Run, error) {
	f.mu.Lock()
	fail := f.saved && f.loadErr != nil
	f.mu.Unlock()
	if fail {
		return nil, f.loadErr
	}
	return f.Store.Load(ctx, id)
}

// TestDecideClassifiesEveryOutcome: what Decide returns says truly whether
// the decision was recorded, whatever the store and the queue did.
func TestDecideClassifiesEveryOutcome(t *testing.T) {
	ctx := context.Background()
	lostReply := fmt.Errorf("save run r-1: %w: read tcp: i/o timeout", pipeline.ErrUnknownOutcome)
	for _, tc := range []struct {
		name     string
		store    func(*faultyStore)
		queueErr error
		recorded bool
		sleeps   []time.Duration // the waits between attempts
		check    func(t *testing.T, err error)
	}{
		{name: "recorded and queued", recorded: true, check: func(t *testing.T, err error) {
			if err != nil {
				t.Fatal(err)
			}
		}},
		{name: "recorded, the queue down", queueErr: errors.New("dial tcp: connection refused"), recorded: true,
			sleeps: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatalf("a recorded decision whose wake-up failed: %v, want nil (the rescue takes it)", err)
				}
			}},
		{name: "recorded, the reply lost", recorded: true, sleeps: []time.Duration{200 * time.Millisecond}, store: func(f *faultyStore) {
			f.save = func(_ context.Context, _ *pipeline.Run, write func() error) error {
				if err := write(); err != nil {
					return err
				}
				return lostReply
			}
		}, check: func(t *testing.T, err error) {
			if err != nil {
				t.Fatalf("a save that committed but whose reply was lost: %v, want nil (recorded)", err)
			}
		}},
		{name: "sent, then the store went away", sleeps: []time.Duration{200 * time.Millisecond}, store: func(f *faultyStore) {
			f.save = func(context.Context, *pipeline.Run, func() error) error { return lostReply }
			f.loadErr = errors.New("dial tcp: connection refused")
		}, check: func(t *testing.T, err error) {
			if !errors.Is(err, pipeline.ErrDecisionUnknown) {
				t.Fatalf("%v, want ErrDecisionUnknown", err)
			}
		}},
		{name: "refused by the store", store: func(f *faultyStore) {
			f.save = func(context.Context, *pipeline.Run, func() error) error {
				return errors.New("save run r-1: OOM command not allowed when used memory > 'maxmemory'")
			}
		}, check: func(t *testing.T, err error) {
			if err == nil || errors.Is(err, pipeline.ErrDecisionUnknown) {
				t.Fatalf("%v, want a plain error: nothing was written", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fs *faultyStore
			e := newEnv(t, func(s pipeline.Store) pipeline.Store { fs = &faultyStore{Store: s}; return fs })
			inst := e.waitingRun(false)
			r := e.load()
			_ = r.Checkpoints[0].Offer(t0, "engine")
			if err := e.real.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			if tc.store != nil {
				tc.store(fs)
			}
			e.queue.fail = tc.queueErr
			_, err := e.eng.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1", At: t0.Add(time.Minute)})
			tc.check(t, err)
			if got := e.slept(); !slices.Equal(got, tc.sleeps) {
				t.Errorf("waits between attempts %v, want %v", got, tc.sleeps)
			}
			got := e.load().Checkpoints[0]
			if recorded := got.State == checkpoints.StateSubmitted; recorded != tc.recorded {
				t.Fatalf("checkpoint %s: recorded %v, want %v", got.State, recorded, tc.recorded)
			}
			if tc.recorded && tc.queueErr == nil && len(e.queue.woken()) != 1 {
				t.Fatalf("wake-ups %v, want one", e.queue.woken())
			}
			if tc.recorded && tc.queueErr != nil {
				// Not queued, but listed where a rescue pass looks.
				ids, _ := e.real.WorkRuns(ctx, "runs", t0.Add(time.Hour), 10)
				if len(ids) != 1 {
					t.Fatalf("the decided run is not in its queue's work index (%v): no rescue would find it", ids)
				}
			}
		})
	}
}

// TestAStepThatKeepsFailingEndsTheRunWithItsCause: attempts are counted in
// the run, whichever worker makes them; the third failure ends the run and
// says why, and an attempt whose worker died counts too.
func TestAStepThatKeepsFailingEndsTheRunWithItsCause(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	r, err := e.eng.Start(ctx, pipeline.Request{Question: "How do heat pumps cope with frost?", Mode: checkpoints.ModeAuto,
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt < pipeline.MaxStepAttempts; attempt++ {
		var re *pipeline.RetryError
		if err := e.eng.Advance(ctx, r.ID); !errors.As(err, &re) || re.Attempt != attempt || re.After != pipeline.StepRetryDelay(attempt) {
			t.Fatalf("attempt %d: %v, want a RetryError for attempt %d after %v", attempt, err, attempt, pipeline.StepRetryDelay(attempt))
		}
	}
	if err := e.eng.Advance(ctx, r.ID); err != nil {
		t.Fatalf("the last attempt: %v", err)
	}
	got := e.load()
	want := "the plan step failed 3 times: the model at http://127.0.0.1:9/v1 could not be reached (connection refused)"
	if got.Status != pipeline.StatusFailed || got.Failure != want || !got.Presented {
		t.Fatalf("status %s, failure %q, presented %v; want failed: %q", got.Status, got.Failure, got.Presented, want)
	}
	if e.model.calls != pipeline.MaxStepAttempts {
		t.Fatalf("%d model calls, want %d", e.model.calls, pipeline.MaxStepAttempts)
	}

	// A worker that died during its attempt never reported back: the attempt
	// still counts, and after the last one the run ends.
	e2 := newEnv(t, nil)
	r2, err := e2.eng.Start(ctx, pipeline.Request{Question: "How do heat pumps cope with frost?", Mode: checkpoints.ModeAuto, Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if err != nil {
		t.Fatal(err)
	}
	stored := e2.load()
	stored.Attempt = pipeline.StepAttempt{Step: pipeline.StepPlan, N: pipeline.MaxStepAttempts}
	stored.Status = pipeline.StatusRunning
	if err := e2.real.Save(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if err := e2.eng.Advance(ctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	if got := e2.load(); got.Status != pipeline.StatusFailed || !strings.Contains(got.Failure, "its worker stopped before it finished") || e2.model.calls != 0 {
		t.Fatalf("status %s, failure %q, calls %d", got.Status, got.Failure, e2.model.calls)
	}

	// One attempt failed and reported why, the later ones' workers died:
	// the run ends saying the last attempt's worker stopped, and names the
	// earlier failure beside it, not as the cause of all three.
	e3 := newEnv(t, nil)
	r3, err := e3.eng.Start(ctx, pipeline.Request{Question: "How do heat pumps cope with frost?", Mode: checkpoints.ModeAuto, Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if err != nil {
		t.Fatal(err)
	}
	stored = e3.load()
	stored.Attempt = pipeline.StepAttempt{Step: pipeline.StepPlan, N: pipeline.MaxStepAttempts, LastError: "the shared rate limit had no room within 5s"}
	stored.Status = pipeline.StatusRunning
	if err := e3.real.Save(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if err := e3.eng.Advance(ctx, r3.ID); err != nil {
		t.Fatal(err)
	}
	want = "the plan step failed 3 times: its worker stopped before it finished (an earlier attempt failed: the shared rate limit had no room within 5s)"
	if got := e3.load(); got.Status != pipeline.StatusFailed || got.Failure != want {
		t.Fatalf("status %s, failure %q; want failed: %q", got.Status, got.Failure, want)
	}
}

// TestTheWaitForTheModelIsBoundedAcrossAttempts: the time a step's model
// calls bring no answer adds up over its attempts, whichever worker makes
// them; once it reaches ModelWait the step fails for good, saying so.
func TestTheWaitForTheModelIsBoundedAcrossAttempts(t *testing.T) {
	ctx := context.Background()
	e := newEnvWith(t, nil, func(c *pipeline.Config) { c.ModelWait = 70 * time.Second })
	e.model.clock, e.model.took = e.clock, 40*time.Second
	e.model.err = errors.New("the model at http://127.0.0.1:9/v1 did not answer in time")
	r, err := e.eng.Start(ctx, pipeline.Request{Question: "How do heat pumps cope with frost?", Mode: checkpoints.ModeAuto,
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if err != nil {
		t.Fatal(err)
	}
	var re *pipeline.RetryError
	if err := e.eng.Advance(ctx, r.ID); !errors.As(err, &re) || re.Attempt != 1 {
		t.Fatalf("the first attempt (40 s of 70 s): %v, want a RetryError", err)
	}
	if got := e.load().Attempt.ModelWait; got != 40*time.Second {
		t.Fatalf("the run records %v waited for the model, want 40s", got)
	}
	if err := e.eng.Advance(ctx, r.ID); err != nil {
		t.Fatalf("the second attempt (80 s of 70 s): %v, want the run ended", err)
	}
	got := e.load()
	want := "the model could not do the plan step: the model did not answer within 1m10s (LLM_STEP_WAIT)"
	if got.Status != pipeline.StatusFailed || got.Failure != want {
		t.Fatalf("status %s, failure %q; want failed: %q", got.Status, got.Failure, want)
	}
	if e.model.calls != 2 {
		t.Fatalf("%d model calls, want 2", e.model.calls)
	}
}
